"""POST /v1/ask with stream: true: facts, the LM's tokens as they come, then the answer."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from fixtures.bitemporal import CONGRESS, HOME, lawler_store

from factstream.access import KeyTable
from factstream.api.app import create_app
from factstream.clients import Clients
from factstream.config import ApiSettings, Settings
from factstream.embed.fake import HashingEmbedder
from factstream.errors import LMUnavailable
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.metrics import Metrics

GOOD = (
    '{"reasoning": "The \\"current\\" fact says so.", "answer": "a United States representative"}'
)
BLANK = '{"reasoning": "unsure", "answer": " "}'
QUESTION = {"question": "What is Mike Lawler's position?", "namespace": "desk", "stream": True}


@pytest.fixture
def lm() -> ScriptedLM:
    return ScriptedLM()


@pytest.fixture
def http(lm: ScriptedLM) -> Iterator[TestClient]:
    store = asyncio.run(lawler_store())
    clients = Clients(Metrics.create(), store, HashingEmbedder(), lm, TaskRunner(lm))
    settings = Settings(api=ApiSettings(min_similarity=-1.0))
    app = create_app(settings, clients=clients, keys=KeyTable(open_access=True))
    with TestClient(app) as client:
        yield client


def events(http: TestClient, body: dict[str, Any]) -> list[tuple[str, Any]]:
    with http.stream("POST", "/v1/ask", json=body) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        raw = "".join(response.iter_text())
    found = []
    for block in raw.strip().split("\n\n"):
        head, data = block.split("\n", 1)
        found.append((head.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return found


def test_tokens_come_between_the_facts_and_the_answer(http: TestClient, lm: ScriptedLM) -> None:
    lm.add(GOOD)
    got = events(http, QUESTION)
    names = [name for name, _ in got]
    tokens = [data for name, data in got if name == "token"]
    assert names == ["facts"] + ["token"] * len(tokens) + ["answer", "done"]
    assert len(tokens) == len(GOOD.split())  # the scripted LM writes a word at a time
    assert "".join(t["text"] for t in tokens) == GOOD
    assert {t["attempt"] for t in tokens} == {1}
    answer = "".join(t["fields"].get("answer", "") for t in tokens)
    reasoning = "".join(t["fields"].get("reasoning", "") for t in tokens)
    assert reasoning == 'The "current" fact says so.'
    final = got[-2][1]
    assert answer == final["answer"] == "a United States representative"
    assert {f["text"] for f in final["facts"]} == {CONGRESS, HOME}
    assert {f["text"] for f in got[0][1]["facts"]} == {CONGRESS, HOME}


def test_an_invalid_answer_is_replaced_by_the_next_attempt(
    http: TestClient, lm: ScriptedLM
) -> None:
    lm.add(BLANK, GOOD)
    got = events(http, QUESTION)
    tokens = [data for name, data in got if name == "token"]
    assert "".join(t["text"] for t in tokens if t["attempt"] == 1) == BLANK
    assert "".join(t["text"] for t in tokens if t["attempt"] == 2) == GOOD
    second = "".join(t["fields"].get("answer", "") for t in tokens if t["attempt"] == 2)
    assert second == got[-2][1]["answer"] == "a United States representative"


def test_an_lm_failure_ends_the_stream_with_an_error(http: TestClient, lm: ScriptedLM) -> None:
    lm.add(LMUnavailable("http://lm", "down"))
    got = events(http, QUESTION)
    assert [name for name, _ in got] == ["facts", "error"]
    assert "down" in got[-1][1]["detail"]


def test_without_stream_the_reply_is_one_json_body(http: TestClient, lm: ScriptedLM) -> None:
    lm.add(GOOD)
    response = http.post("/v1/ask", json={**QUESTION, "stream": False})
    assert response.status_code == 200
    assert response.json()["answer"] == "a United States representative"
    assert lm.requests and len(lm.requests) == 1
