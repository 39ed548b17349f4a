"""The pipeline drops ungrounded adds and rewrites, counts and logs them, keeps the rest."""

from __future__ import annotations

import dataclasses
import logging
from datetime import UTC, datetime

import pytest
from fixtures.decisions import Decisions
from fixtures.editing import NS, Harness, doc
from prometheus_client import CollectorRegistry

from factstream.lm.tasks.runner import TaskRunner
from factstream.metrics import LMMetrics
from factstream.topics.records import ChangeKind, Document, EditOp, Turn


def counted(h: Harness) -> tuple[Harness, CollectorRegistry]:
    registry = CollectorRegistry()
    runner = TaskRunner(h.lm, metrics=LMMetrics.create(registry))
    h.ctx = dataclasses.replace(h.ctx, runner=runner)
    return h, registry


def grounded(registry: CollectorRegistry, task: str, outcome: str) -> float:
    labels = {"task": task, "model": "scripted", "outcome": outcome}
    return registry.get_sample_value("factstream_lm_grounded_total", labels) or 0.0


def refused(registry: CollectorRegistry, task: str, reason: str) -> float:
    labels = {"task": task, "model": "scripted", "reason": reason}
    return registry.get_sample_value("factstream_lm_refused_total", labels) or 0.0


async def test_a_refused_add_is_dropped_and_the_others_go_through(
    caplog: pytest.LogCaptureFixture,
) -> None:
    decisions = Decisions(
        extract={
            "Assembly": [
                "Mike Lawler won a New York State Assembly seat.",
                "Jack Ciatterelli is the current Governor of California.",
                "the rewritten fact",
                "Mike Lawler won the seat in 2019.",
            ]
        }
    )
    h, registry = counted(Harness(decisions, grounding=True))
    caplog.set_level(logging.INFO, logger="factstream.edit.pipeline")
    edits = await h.feed(doc("Mike Lawler won his New York State Assembly seat.", 1, "d1"))
    assert [(e.op, e.text) for e in edits] == [
        (EditOp.ADD, "Mike Lawler won a New York State Assembly seat.")
    ]
    assert refused(registry, "extract_facts", "ungrounded_entity") == 1
    assert refused(registry, "extract_facts", "placeholder") == 1
    assert refused(registry, "extract_facts", "ungrounded_number") == 1
    logged = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert len(logged) == 3 and all("'d1'" in line for line in logged)
    assert grounded(registry, "extract_facts", "kept") == 1
    assert grounded(registry, "extract_facts", "refused") == 3


async def test_a_refused_rewrite_closes_the_old_fact_as_without_a_rewrite() -> None:
    decisions = Decisions(extract={"appointed": ["Parker is CEO of Northwind."]})
    h, registry = counted(Harness(decisions, grounding=True))
    await h.feed(doc("Northwind appointed Parker as CEO.", 1, "d1"))
    decisions.extract = {"succeeded": ["Quinn succeeded Parker as CEO of Northwind."]}
    decisions.outdated = {"Parker is CEO": "John Doe is CEO of Northwind."}
    edits = await h.feed(doc("Quinn succeeded Parker as CEO of Northwind.", 5, "d2"))
    assert [e.op for e in edits] == [EditOp.CLOSE, EditOp.ADD]
    close = edits[0]
    assert close.text == "Parker is CEO of Northwind." and close.change is ChangeKind.UPDATE
    assert refused(registry, "rewrite_fact", "placeholder") == 1
    assert grounded(registry, "rewrite_fact", "refused") == 1
    assert grounded(registry, "extract_facts", "kept") == 2  # Parker's, then Quinn's


async def test_a_rewrite_may_use_the_old_facts_names() -> None:
    decisions = Decisions(extract={"appointed": ["Parker is CEO of Northwind."]})
    h, registry = counted(Harness(decisions, grounding=True))
    await h.feed(doc("Northwind appointed Parker as CEO.", 1, "d1"))
    decisions.extract = {}
    decisions.outdated = {"Parker is CEO": "Quinn is CEO of Northwind."}
    (rewrite,) = await h.feed(doc("Quinn took over from Parker on Monday.", 5, "d2"))
    assert rewrite.op is EditOp.REWRITE and rewrite.text == "Quinn is CEO of Northwind."
    assert registry.get_sample_value("factstream_lm_refused_total", {}) is None
    assert grounded(registry, "rewrite_fact", "kept") == 1


async def test_with_grounding_off_every_fact_goes_through_uncounted() -> None:
    ungrounded = "Jack Ciatterelli is the current Governor of California."
    decisions = Decisions(extract={"Assembly": [ungrounded]})
    h, registry = counted(Harness(decisions, grounding=False))
    edits = await h.feed(doc("Mike Lawler won his New York State Assembly seat.", 1, "d1"))
    assert [(e.op, e.text) for e in edits] == [(EditOp.ADD, ungrounded)]
    assert refused(registry, "extract_facts", "ungrounded_entity") == 0
    assert grounded(registry, "extract_facts", "kept") == 0  # nothing checked


def _chunk(doc_id: str) -> Document:
    turns = [
        Turn(speaker="Ben Okafor", text="Ana! How have you been?"),
        Turn(speaker="Ana Silva", text="I moved from Porto to Lisbon last month."),
    ]
    when = datetime(2023, 1, 5, tzinfo=UTC)
    return Document(id=doc_id, namespace=NS, kind="conversation", timestamp=when, turns=turns)  # type: ignore[call-arg]


async def _rewrite_in_a_chunk(rewritten: str, *, grounding: bool) -> CollectorRegistry:
    decisions = Decisions(extract={"Porto": ["Ana Silva lives in Porto."]})
    h, registry = counted(Harness(decisions, grounding=grounding))
    await h.feed(doc("Ana Silva lives in Porto, where she works.", 1, "d1"))
    decisions.extract = {}
    decisions.outdated = {"lives in Porto": rewritten}
    await h.feed(_chunk("c1-1"))
    return registry


@pytest.mark.parametrize("grounding", [True, False])
async def test_a_rewrite_in_the_first_person_is_refused_and_not_counted_as_checked(
    grounding: bool,
) -> None:
    # The person check refused it; the grounding check never ran on it (as for an add).
    registry = await _rewrite_in_a_chunk("I live in Lisbon.", grounding=grounding)
    assert refused(registry, "rewrite_fact", "unresolved_person") == 1
    assert grounded(registry, "rewrite_fact", "refused") == 0
    assert grounded(registry, "rewrite_fact", "kept") == 0


async def test_a_rewrite_in_a_chunk_is_counted_only_where_grounding_checked_it() -> None:
    checked = await _rewrite_in_a_chunk("Ana Silva lives in Lisbon.", grounding=True)
    assert grounded(checked, "rewrite_fact", "kept") == 1
    unchecked = await _rewrite_in_a_chunk("Ana Silva lives in Lisbon.", grounding=False)
    assert grounded(unchecked, "rewrite_fact", "kept") == 0
    assert unchecked.get_sample_value("factstream_lm_refused_total", {}) is None


@pytest.mark.parametrize("grounding", [True, False])
@pytest.mark.parametrize("rewritten", [",", " . ", "—"])
async def test_a_rewrite_without_words_is_refused_and_the_old_fact_closed(
    rewritten: str, grounding: bool, caplog: pytest.LogCaptureFixture
) -> None:
    # The demo's closing story: "The Queen is head of state of 16 countries ..." rewritten
    # to ",". A rewrite states a fact; one without a word states none, whatever the settings.
    decisions = Decisions(extract={"appointed": ["Parker is CEO of Northwind."]})
    h, registry = counted(Harness(decisions, grounding=grounding))
    await h.feed(doc("Northwind appointed Parker as CEO.", 1, "d1"))
    decisions.extract = {}
    decisions.outdated = {"Parker is CEO": rewritten}
    caplog.set_level(logging.INFO, logger="factstream.edit.pipeline")
    edits = await h.feed(doc("Quinn took over from Parker at Northwind.", 5, "d2"))
    assert [(e.op, e.text) for e in edits] == [(EditOp.CLOSE, "Parker is CEO of Northwind.")]
    assert refused(registry, "rewrite_fact", "no_words") == 1
    # Refused before the grounding check, as a fact in the first person is: never counted
    # among the facts that check ran on.
    assert grounded(registry, "rewrite_fact", "refused") == 0
    logged = [r.getMessage() for r in caplog.records if "refused a rewritten" in r.getMessage()]
    assert len(logged) == 1 and "'d2'" in logged[0] and "no_words" in logged[0]


async def test_an_added_fact_without_words_is_refused() -> None:
    decisions = Decisions(extract={"appointed": ["Parker is CEO of Northwind.", "..,"]})
    h, registry = counted(Harness(decisions, grounding=True))
    edits = await h.feed(doc("Northwind appointed Parker as CEO.", 1, "d1"))
    assert [e.text for e in edits] == ["Parker is CEO of Northwind."]
    assert refused(registry, "extract_facts", "no_words") == 1
