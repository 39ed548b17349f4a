"""A conversation's fact carries the turns it was said in, end to end (issue 38, item 2).

A real worker (with the deterministic stub LM) edits a conversation chunk whose turns carry
the producer's ids; the fact's turn ids must be on the changelog, in Weaviate, in the API's
facts and answers, in the PostgreSQL mirror, and still there after a rebuild from the
changelog.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable

import httpx
import psycopg
from fixtures.api_server import serving
from fixtures.decisions import Decisions
from fixtures.stack import StackFactory

from factstream.access import KeyTable
from factstream.api.app import create_app
from factstream.clients import open_clients
from factstream.config import MirrorSettings
from factstream.mirror.runner import run_mirror
from factstream.topics.records import EditOp, FactEdit, accepted_versions

NS = "talk"
WORK = "Ana Silva works at Bluefin Logistics in Lisbon."
CITED = ["D1:2", "D1:4"]  # Lisbon, and Bluefin Logistics; never the greeting naming Ana
CHUNK = {
    "id": "conv-1-session-1",
    "namespace": NS,
    "kind": "conversation",
    "timestamp": "2023-05-08T13:56:00Z",
    "turns": [
        {"speaker": "Ben Okafor", "text": "Hi Ana! Long time.", "id": "D1:1"},
        {"speaker": "Ana Silva", "text": "I moved to Lisbon last spring.", "id": "D1:2"},
        {"speaker": "Ben Okafor", "text": "Where do you work now?", "id": "D1:3"},
        {"speaker": "Ana Silva", "text": "At Bluefin Logistics.", "id": "D1:4"},
    ],
}


async def test_a_conversations_fact_keeps_its_turn_ids_from_changelog_to_api_and_rebuild(
    stack_factory: StackFactory, database_factory: Callable[[], str]
) -> None:
    stack = await stack_factory(Decisions(extract={"Bluefin": [WORK]}))
    stack.start_worker()
    await stack.publish([CHUNK])
    assert list((await stack.wait_outcomes(1)).values()) == ["applied"]

    # The changelog: the add cites the turns, in the latest schema version.
    [edit] = await stack.changelog()
    assert (edit.op, edit.text, edit.turn_ids) == (EditOp.ADD, WORK, CITED)
    assert edit.schema_version == max(accepted_versions(FactEdit))
    assert edit.document_id == CHUNK["id"] and edit.said_by == "Ana Silva"

    # Weaviate: the fact as the materializer wrote it.
    [fact] = await stack.facts(NS)
    assert (fact.text, fact.turn_ids, fact.history[0].document_id) == (WORK, CITED, CHUNK["id"])

    # The API: the fact listed and cited in an answer, with its turns.
    async with open_clients(stack.settings) as clients:
        app = create_app(stack.settings, clients=clients, keys=KeyTable(open_access=True))
        async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=120) as http:
            listed = await http.get("/v1/facts", params={"namespace": NS})
            assert listed.status_code == 200, listed.text
            [shown] = listed.json()["facts"]
            assert (shown["text"], shown["turn_ids"]) == (WORK, CITED)
            ask = {"question": "Where does Ana Silva work?", "namespace": NS}
            asked = await http.post("/v1/ask", json=ask)
            assert asked.status_code == 200, asked.text
            assert [f["turn_ids"] for f in asked.json()["facts"]] == [CITED]

    # The PostgreSQL mirror of the same changelog.
    dsn = database_factory()
    report = await run_mirror(stack.settings.kafka, MirrorSettings(poll_s=0.2), dsn, follow=False)
    assert report.edits == 1
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT text, turn_ids, record FROM facts").fetchall()
    assert rows == [(WORK, CITED, fact.model_dump(mode="json", exclude_none=True))]

    # A rebuild from the changelog alone keeps them.
    run = subprocess.run(
        [sys.executable, "-m", "factstream", "rebuild", "--namespace", NS],
        env={**os.environ, **stack.env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert await stack.facts(NS) == [fact]
