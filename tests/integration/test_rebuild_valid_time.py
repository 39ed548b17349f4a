"""`factstream rebuild` from a changelog with valid time gives the state the live path made.

The batches go on the real changelog (Kafka) and are applied live by the materializer into
Weaviate; then the namespace is rebuilt by the CLI from the changelog alone. The changelog
mixes a version-1 edit (written before valid time) with updates, a close and a correction.
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

from fixtures.stack import StackFactory

from factstream.edit.materializer import Materializer
from factstream.embed.fake import HashingEmbedder
from factstream.store.rules import valid_interval
from factstream.streams.changelog import ChangelogPublisher
from factstream.temporal.intervals import ValidInterval, at
from factstream.topics.records import (
    Fact,
    FactEdit,
    accepted_versions,
    edit_id_for,
    fact_id_for,
)

NS = "desk"
T0 = datetime(2023, 1, 1, tzinfo=UTC)


def day(n: int) -> datetime:
    return T0 + timedelta(days=n)


def batch(doc: str, when: int, *edits: dict[str, Any]) -> list[FactEdit]:
    """One document's batch; each edit's fact id defaults to the one its position makes."""
    return [
        FactEdit.model_validate(
            {
                "edit_id": edit_id_for(NS, doc, pos),
                "namespace": NS,
                "fact_id": fact_id_for(NS, doc, pos),
                "truth": True,
                "event_time": day(when),
                "document_id": doc,
                "batch": {"id": doc, "size": len(edits), "position": pos},
                "input": {"topic": "docs", "partition": 0, "offset": when},
                "decided_by": {"model": "m", "prompt_version": "p.v1"},
                "created_at": day(when),
                **edit,
            }
        )
        for pos, edit in enumerate(edits)
    ]


def changelog() -> list[list[FactEdit]]:
    mayor, team = fact_id_for(NS, "d1", 0), fact_id_for(NS, "d1", 1)
    mayor2 = fact_id_for(NS, "d2", 0)
    return [
        batch(
            "d1",
            0,
            {"op": "add", "text": "Alice is the mayor.", "schema_version": 1},
            {"op": "add", "text": "Bob plays for the Red Sox.", "valid_from": day(-400)},
            {"op": "add", "text": "The bridge is closed.", "valid_to": day(30)},
        ),
        batch(
            "d2",
            10,
            {
                "op": "rewrite",
                "text": "Carol is the mayor.",
                "previous_text": "Alice is the mayor.",
                "replaces": mayor,
                "change": "update",
                "valid_from": day(8),
            },
            {
                "op": "close",
                "fact_id": team,
                "text": "Bob plays for the Red Sox.",
                "valid_to": day(9),
            },
        ),
        batch(
            "d3",
            20,
            {
                "op": "rewrite",
                "text": "Dana is the mayor.",
                "previous_text": "Carol is the mayor.",
                "replaces": mayor2,
                "change": "correction",
            },
            {
                "op": "invalidate",
                "fact_id": team,
                "text": "Bob plays for the Red Sox.",
                "truth": False,
                "change": "correction",
            },
        ),
    ]


async def _facts(stack: Any) -> dict[str, Fact]:
    return {f.fact_id: f for f in await stack.facts(NS)}


async def test_rebuild_with_valid_time_equals_the_live_state(stack_factory: StackFactory) -> None:
    stack = await stack_factory()
    publisher = ChangelogPublisher(stack.settings.kafka)
    store = await stack.store()
    await publisher.start()
    try:
        materializer = Materializer(store, HashingEmbedder(dim=384))
        for edits in changelog():
            await publisher.publish_batch(edits)
            assert (await materializer.apply(edits)).skipped == []
        # Held on day 5: Alice (closed on day 8 by the update), Bob, the closed bridge.
        hits = await store.search(
            NS,
            "",
            [1.0] + [0.0] * 383,
            as_of=None,
            top_k=10,
            min_similarity=-1.0,
            alpha=1.0,
            valid=at(day(5)),
        )
        assert sorted(h.fact.text for h in hits) == [
            "Alice is the mayor.",
            "The bridge is closed.",
        ]  # Bob's fact was corrected: never true
    finally:
        await publisher.stop()
        await store.close()
    live = await _facts(stack)
    alice = live[fact_id_for(NS, "d1", 0)]
    latest = max(accepted_versions(Fact))  # closed: written as the latest version
    assert alice.truth and alice.schema_version == latest and alice.closed_at == day(10)
    assert valid_interval(alice) == ValidInterval(day(0), day(8))
    carol = live[fact_id_for(NS, "d2", 0)]
    assert not carol.truth and carol.valid_to is None  # corrected, not closed

    run = subprocess.run(
        [sys.executable, "-m", "factstream", "rebuild", "--namespace", NS],
        env={**os.environ, **stack.env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 batches" in run.stdout
    assert await _facts(stack) == live
