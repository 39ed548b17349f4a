"""POST /v1/ask with mode: the hops, rounds and confidence over HTTP (in-memory doubles)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from fixtures.chain_world import BOTH, NS, chain_store

from factstream.access import KeyTable
from factstream.api.app import create_app
from factstream.clients import Clients
from factstream.config import ApiSettings, Settings
from factstream.embed.fake import HashingEmbedder
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.metrics import Metrics

ANSWER = json.dumps({"reasoning": "from the facts", "answer": "Cy Ode"})
SUPPORTED = json.dumps({"reason": "stated", "supported": True})


@pytest.fixture
def http() -> Iterator[TestClient]:
    store = asyncio.run(chain_store())
    lm = ScriptedLM([ANSWER, SUPPORTED] * 10)
    clients = Clients(Metrics.create(), store, HashingEmbedder(), lm, TaskRunner(lm))
    api = ApiSettings(min_similarity=-1.0, time_plan=False, self_check=True)
    app = create_app(Settings(api=api), clients=clients, keys=KeyTable(open_access=True))
    with TestClient(app) as client:
        yield client


def test_multi_hop_lists_the_chain(http: TestClient) -> None:
    response = http.post("/v1/ask", json={"question": BOTH, "namespace": NS, "mode": "multi_hop"})
    assert response.status_code == 200, response.text
    reply = response.json()
    assert reply["mode"] == "multi_hop" and reply["answer"] == "Cy Ode"
    assert [(h["entity"], h["answer"]) for h in reply["hops"]] == [
        ("Ana Silva", "Orbit"),
        ("Orbit", "Cy Ode"),
    ]
    assert reply["hops"][1]["question"] == "What is the chief executive of Orbit?"
    assert all(h["facts"] and h["seconds"] >= 0 for h in reply["hops"])
    assert reply["rounds"] == 1 and reply["confidence"] == 1.0
    assert {"hops", "answer", "verify", "total"} <= set(reply["timings"])
    metrics = http.get("/metrics").text
    assert 'factstream_answers_total{mode="multi_hop"} 1.0' in metrics


def test_single_is_the_default_and_a_bad_mode_is_refused(http: TestClient) -> None:
    reply = http.post("/v1/ask", json={"question": BOTH, "namespace": NS}).json()
    assert reply["mode"] == "single" and reply["hops"] == []
    bad = http.post("/v1/ask", json={"question": BOTH, "namespace": NS, "mode": "many"})
    assert bad.status_code == 422


def test_streamed_multi_hop_sends_the_chains_facts_first(http: TestClient) -> None:
    body = {"question": BOTH, "namespace": NS, "mode": "multi_hop", "stream": True}
    with http.stream("POST", "/v1/ask", json=body) as response:
        text = "".join(response.iter_text())
    blocks = [block for block in text.split("\n\n") if block.strip()]
    events = [
        (block.split("\n", 1)[0].removeprefix("event: "), block.split("data: ", 1)[1])
        for block in blocks
    ]
    assert events[0][0] == "facts" and [name for name, _ in events][-2:] == ["answer", "done"]
    facts = json.loads(events[0][1])["facts"]
    answer = json.loads(events[-2][1])
    assert [f["text"] for f in facts] == [f["text"] for f in answer["facts"]]
    assert answer["mode"] == "multi_hop" and len(answer["hops"]) == 2
