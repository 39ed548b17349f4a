"""The turns a conversation's fact was said in, as the API, the console and the CLI show them.

The app runs on in-memory doubles (memory store, hashing embedder, scripted LM); the facts
are a real pipeline's: a conversation chunk with the producer's turn ids is edited and
applied (fixtures/editing.py), beside an article whose fact cites no turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient
from fixtures.decisions import Decisions
from fixtures.editing import NS, Harness, doc

from factstream.access import KeyTable
from factstream.api.app import create_app
from factstream.clients import Clients
from factstream.config import ApiSettings, Settings
from factstream.embed.fake import HashingEmbedder
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.metrics import Metrics
from factstream.store.memory import InMemoryFactStore
from factstream.topics.records import Document, Turn

WORK = "Ana Silva works at Bluefin Logistics in Lisbon."
BRIDGE = "The Vasco da Gama bridge is closed."
REPLY = '{"reasoning": "from the facts", "answer": "Bluefin Logistics"}'
CHUNK = Document(
    id="locomo-1-s1",
    namespace=NS,
    kind="conversation",
    timestamp=datetime(2023, 5, 8, 13, 56, tzinfo=UTC),
    turns=[
        Turn(speaker="Ben Okafor", text="Hi Ana! Long time.", id="D1:1"),
        Turn(speaker="Ana Silva", text="I moved to Lisbon last spring.", id="D1:2"),
        Turn(speaker="Ben Okafor", text="Where do you work now?", id="D1:3"),
        Turn(speaker="Ana Silva", text="At Bluefin Logistics.", id="D1:4"),
    ],
)  # type: ignore[call-arg]


async def _store() -> InMemoryFactStore:
    h = Harness(Decisions(extract={"Bluefin": [WORK], "bridge": [BRIDGE]}))
    await h.feed(CHUNK)
    await h.feed(doc("Traffic: the Vasco da Gama bridge is closed.", 9, "news-1"))
    return h.store


@pytest.fixture
def http() -> Iterator[TestClient]:
    store = asyncio.run(_store())
    lm = ScriptedLM([REPLY] * 10)
    clients = Clients(Metrics.create(), store, HashingEmbedder(), lm, TaskRunner(lm))
    settings = Settings(api=ApiSettings(min_similarity=-1.0))
    app = create_app(settings, clients=clients, keys=KeyTable(open_access=True))
    with TestClient(app) as client:
        yield client


def _by_text(facts: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {f["text"]: f for f in facts}


def test_facts_and_answers_list_the_turns_each_fact_was_said_in(http: TestClient) -> None:
    listed = http.get("/v1/facts", params={"namespace": NS})
    assert listed.status_code == 200, listed.text
    facts = _by_text(listed.json()["facts"])
    assert facts[WORK]["turn_ids"] == ["D1:2", "D1:4"]
    assert facts[WORK]["history"][0]["document_id"] == CHUNK.id  # the turns' document
    assert facts[BRIDGE]["turn_ids"] == []  # an article's fact
    asked = http.post("/v1/ask", json={"question": "Where does Ana Silva work?", "namespace": NS})
    assert asked.status_code == 200, asked.text
    assert _by_text(asked.json()["facts"])[WORK]["turn_ids"] == ["D1:2", "D1:4"]


def test_the_console_links_a_fact_to_the_turns_it_was_said_in(http: TestClient) -> None:
    facts = _by_text(http.get("/v1/facts", params={"namespace": NS}).json()["facts"])
    page = http.get(f"/ui/f/facts/{facts[WORK]['fact_id']}", params={"namespace": NS})
    assert page.status_code == 200, page.text
    for turn in ("D1:2", "D1:4"):
        assert f'href="/ui/documents/{CHUNK.id}?namespace={NS}#turn-{turn}">{turn}</a>' in page.text
    article = http.get(f"/ui/f/facts/{facts[BRIDGE]['fact_id']}", params={"namespace": NS})
    assert "Said in turn" not in article.text and "#turn-" not in article.text


def test_a_conversations_document_page_anchors_each_turn_and_its_edits_cite_them() -> None:
    from factstream.api.console.routes import templates

    h = Harness(Decisions(extract={"Bluefin": [WORK]}))
    edits = asyncio.run(h.feed(CHUNK))
    html = templates.get_template("fragments/document.html").render(
        edits=edits, document=CHUNK, namespace=NS, id=CHUNK.id
    )
    for turn in CHUNK.turns or ():
        assert f'<li id="turn-{turn.id}">' in html and turn.text in html
    assert f'href="/ui/documents/{CHUNK.id}?namespace={NS}#turn-D1:4">D1:4</a>' in html


def test_the_command_line_shows_the_turns_with_the_first_change() -> None:
    from factstream.console import history_line

    h = Harness(Decisions(extract={"Bluefin": [WORK], "bridge": [BRIDGE]}))
    asyncio.run(h.feed(CHUNK))
    asyncio.run(h.feed(doc("Traffic: the Vasco da Gama bridge is closed.", 9, "news-1")))
    page = asyncio.run(h.store.list_facts(NS))
    lines = {f.text: history_line(f) for f in page.facts}
    assert lines[WORK] == f"2023-05-08 true ({CHUNK.id} turns D1:2 D1:4)"
    assert lines[BRIDGE] == "2023-01-09 true (news-1)"
