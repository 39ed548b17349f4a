"""`factstream dlq list | show | replay` on real Kafka, with real worker processes.

A document over the size limit is dead-lettered; the operator raises the limit and replays
the dead letter twice: the worker edits the document in once and skips the second replay.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from fixtures.decisions import Decisions
from fixtures.stack import Stack, StackFactory

from factstream.ops.dead_letters import REPLAY_HEADER, read_letters
from factstream.streams.browse import committed_records
from factstream.topics.definitions import TopicName

NS = "dlq-ops"
FILLER = "The city council met on Tuesday and discussed the budget at length. " * 4
DOC: dict[str, Any] = {
    "id": "doc-big",
    "namespace": NS,
    "kind": "article",
    "timestamp": "2024-03-04T00:00:00+00:00",
    "text": f"[doc-big] Ana Silva moved to Lisbon. {FILLER}",
}


def cli(stack: Stack, *args: str) -> str:
    """``factstream ARGS`` as the operator runs it, with the stack's settings; its output."""
    done = subprocess.run(
        [sys.executable, "-m", "factstream", *args],
        env={**os.environ, **stack.env},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


async def test_a_replayed_dead_letter_is_edited_in_once(stack_factory: StackFactory) -> None:
    stack = await stack_factory(
        Decisions(extract={"Lisbon": ["Ana Silva lives in Lisbon."]}),
        FACTSTREAM_WORKER_MAX_DOCUMENT_BYTES="200",
    )
    raw = json.dumps(DOC).encode()
    assert len(raw) > 200
    first = stack.start_worker()
    await stack.publish_raw([(NS.encode(), raw)])
    assert list((await stack.wait_outcomes(1)).values()) == ["dead_letter"]

    [letter] = await read_letters(stack.settings.kafka, NS)
    assert (letter.key, letter.value, letter.document_id) == (NS.encode(), raw, "doc-big")
    assert letter.cause.startswith("bad input: document of")
    listed = cli(stack, "dlq", "list", "--namespace", NS)
    assert letter.ref in listed and "doc-big" in listed and "1 dead letters" in listed
    shown = cli(stack, "dlq", "show", letter.ref)
    assert "exceeds the limit of 200 (FACTSTREAM_WORKER_MAX_DOCUMENT_BYTES)" in shown
    assert '"id": "doc-big"' in shown

    # The operator raises the limit and replays the dead letter, then replays it again.
    stack.kill_worker(first)
    stack.env["FACTSTREAM_WORKER_MAX_DOCUMENT_BYTES"] = "262144"
    stack.start_worker()
    assert "replayed 1 dead letters" in cli(stack, "dlq", "replay", letter.ref)
    assert "replayed 1 dead letters" in cli(stack, "dlq", "replay", "--all", "--namespace", NS)
    outcomes = await stack.wait_outcomes(3)
    assert sorted(outcomes.values()) == ["applied", "dead_letter", "duplicate"]

    replays = [
        r
        async for r in committed_records(stack.settings.kafka, TopicName.DOCUMENTS)
        if dict(r.headers).get(REPLAY_HEADER) == letter.ref.encode()
    ]
    assert [(r.key, r.value) for r in replays] == [(NS.encode(), raw)] * 2
    edits = [e for e in await stack.changelog() if e.document_id == "doc-big"]
    assert [(e.op.value, e.text) for e in edits] == [("add", "Ana Silva lives in Lisbon.")]
    assert [f.text for f in await stack.facts(NS)] == ["Ana Silva lives in Lisbon."]
    assert stack.lm_stats()["by_document"]["doc-big"]["extract_facts"] == 1  # edited once
