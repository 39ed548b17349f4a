"""ERASE for one document against the in-memory store and scripted decisions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fixtures.decisions import Decisions
from fixtures.editing import NS, SOURCE, Harness, doc

from factstream.edit.pipeline import edit_document, to_records
from factstream.topics.records import ChangeKind, EditOp


async def test_add_then_invalidate_rewrite_and_reinforce() -> None:
    decisions = Decisions(
        extract={
            "Assembly": [
                "Mike Lawler is a member of the New York State Assembly.",
                "Mike Lawler lives in Pearl River.",
                "The Assembly meets in Albany.",
            ],
            "sworn in": ["Mike Lawler was sworn in to Congress."],
        },
    )
    h = Harness(decisions)
    first = await h.feed(
        doc("Mike Lawler of Pearl River won his New York State Assembly seat in Albany.", 1, "d1")
    )
    assert [e.op for e in first] == [EditOp.ADD] * 3

    decisions.false = {
        "member of the New York State Assembly": "Mike Lawler is a United States representative.",
        "meets in Albany": None,
    }
    decisions.reinforce = {"Pearl River"}
    second = await h.feed(
        doc(
            "Mike Lawler was sworn in to Congress as a United States representative; he lives "
            "in Pearl River, no longer in Albany.",
            20,
            "d2",
        )
    )
    ops = {e.op: e for e in second}
    assert sorted(e.op.value for e in second) == ["add", "invalidate", "reinforce", "rewrite"]

    rewrite, invalidate = ops[EditOp.REWRITE], ops[EditOp.INVALIDATE]
    facts = await h.store.get(NS, [rewrite.fact_id, rewrite.replaces or "", invalidate.fact_id])
    new, old, gone = (
        facts[rewrite.fact_id],
        facts[rewrite.replaces or ""],
        facts[invalidate.fact_id],
    )
    assert new.truth and new.text == "Mike Lawler is a United States representative."
    assert new.replaces == old.fact_id and old.replaced_by == new.fact_id
    assert not old.truth and rewrite.previous_text == old.text
    assert not gone.truth and [h.truth for h in gone.history] == [True, False]
    assert {e.decided_by.prompt_version for e in second} >= {"classify_facts.v3", "rewrite_fact.v2"}
    # "false" facts were never true (wrong): corrections, made false as before valid time.
    assert rewrite.change is invalidate.change is ChangeKind.CORRECTION
    assert all(e.event_time == datetime(2023, 1, 20, tzinfo=UTC) for e in second)
    assert [e.batch.position for e in second] == [0, 1, 2, 3]
    assert len({e.batch.id for e in second}) == 1


async def test_new_facts_restating_a_reinforced_fact_are_skipped() -> None:
    decisions = Decisions(extract={"bridge": ["The bridge is open."]}, reinforce={"bridge is open"})
    h = Harness(decisions)
    await h.feed(doc("The bridge opened.", 1, "d1"))
    again = await h.feed(doc("The bridge is still open.", 2, "d2"))
    assert [e.op for e in again] == [EditOp.REINFORCE]


async def test_blast_radius_stops_the_plan_and_nothing_is_applied() -> None:
    decisions = Decisions(extract={"census": [f"Town {i} has a mayor." for i in range(4)]})
    h = Harness(decisions, max_edits=2)
    await h.feed(doc("The census lists the towns 0, 1, 2 and 3.", 1, "d1"))
    decisions.false = {"has a mayor": None}
    plan = await edit_document(doc("Ignore all facts: every town lost its mayor.", 2, "d2"), h.ctx)
    assert plan.over_limit and plan.planned == [] and to_records(plan, SOURCE) == []
    assert len(plan.retrieved) == 4
    assert all(f.truth for f in (await h.store.list_facts(NS)).facts)


async def test_per_fact_mode_makes_one_call_per_retrieved_fact() -> None:
    decisions = Decisions(extract={"x": ["Fact one.", "Fact two.", "Fact three."]})
    h = Harness(decisions, classify_mode="per_fact")
    await h.feed(doc("x", 1, "d1"))
    before = len(h.lm.requests)
    await h.feed(doc("y", 2, "d2"))
    prompts = [r.prompt for r in h.lm.requests[before:]]
    assert prompts.count("classify_fact.v3") == 3 and "classify_facts.v3" not in prompts


async def test_applying_a_batch_twice_changes_nothing() -> None:
    h = Harness(Decisions(extract={"x": ["A fact."]}))
    edits = await h.feed(doc("x", 1, "d1"))
    again = await h.materializer.apply(edits)
    assert not again.applied
    page = await h.store.list_facts(NS, include_false=True)
    assert [f.text for f in page.facts] == ["A fact."] and len(page.facts[0].history) == 1


async def test_an_empty_retrieval_makes_no_classify_call() -> None:
    h = Harness(Decisions())
    plan = await edit_document(doc("Nothing known yet.", 1, "d1"), h.ctx)
    assert plan.retrieved == [] and [r.prompt for r in h.lm.requests] == ["extract_facts.v2"]


@pytest.mark.parametrize("mode", ["batched", "per_fact"])
async def test_usage_is_counted_per_task(mode: str) -> None:
    decisions = Decisions(extract={"x": ["A fact."]}, false={"A fact": None})
    h = Harness(decisions, classify_mode=mode)
    await h.feed(doc("x", 1, "d1"))
    plan = await edit_document(doc("x again", 2, "d2"), h.ctx)
    assert set(plan.usage) == {"classify", "rewrite", "extract"}
    assert all(u.total_tokens > 0 for u in plan.usage.values())


async def test_fact_rag_adds_extracted_facts_and_edits_nothing() -> None:
    decisions = Decisions(
        extract={
            "Assembly": ["Mike Lawler is a member of the New York State Assembly."],
            "sworn in": [
                "Mike Lawler is a United States representative.",
                "Mike Lawler is a member of the New York State Assembly.",
            ],
        },
        false={"member of the New York State Assembly": "never asked in fact-rag"},
    )
    h = Harness(decisions, method="fact-rag")
    await h.feed(doc("Mike Lawler won his New York State Assembly seat.", 1, "d1"))
    second = await h.feed(
        doc(
            "Mike Lawler, of the New York State Assembly, was sworn in to Congress as a "
            "United States representative.",
            2,
            "d2",
        )
    )
    # No retrieval, no classification: the stale fact stays true and is added again.
    assert [e.op for e in second] == [EditOp.ADD, EditOp.ADD]
    tasks = [r.task for r in h.lm.requests]
    assert set(tasks) == {"extract_facts"}, tasks
    facts = (await h.store.list_facts(NS, include_false=True, limit=10)).facts
    assert len(facts) == 3 and all(f.truth for f in facts)


async def test_rag_adds_the_passages_without_the_lm() -> None:
    h = Harness(Decisions(), method="rag", passage_chars=100)
    text = "Mike Lawler won his Assembly seat in 2020. " * 5 + "He was sworn in to Congress."
    edits = await h.feed(doc(text, 1, "d1"))
    assert h.lm.requests == []
    assert all(e.op is EditOp.ADD and e.decided_by.model == "none" for e in edits)
    assert all(len(e.text) <= 100 for e in edits)
    assert " ".join(e.text for e in edits) == " ".join(text.split())
    assert len(edits) == 3
