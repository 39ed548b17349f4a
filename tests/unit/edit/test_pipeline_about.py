"""The pipeline makes false only facts the document names; a refusal is logged and counted."""

from __future__ import annotations

import dataclasses
import logging

import pytest
from fixtures.decisions import Decisions
from fixtures.editing import NS, Harness, doc
from prometheus_client import CollectorRegistry

from factstream.edit.pipeline import bound_problem, edit_document
from factstream.lm.tasks.runner import TaskRunner
from factstream.metrics import LMMetrics
from factstream.topics.records import EditOp

EMMERT = "Emmert is the president of the NCAA."
CREIGHTON = "Creighton Bluejays guard Alex O'Connell drives against the Butler Bulldogs."


def counted(h: Harness) -> tuple[Harness, CollectorRegistry]:
    registry = CollectorRegistry()
    h.ctx = dataclasses.replace(h.ctx, runner=TaskRunner(h.lm, metrics=LMMetrics.create(registry)))
    return h, registry


def sample(registry: CollectorRegistry, name: str, **labels: str) -> float:
    return registry.get_sample_value(name, {"model": "scripted", **labels}) or 0.0


async def seeded(**editor: object) -> tuple[Harness, CollectorRegistry, Decisions]:
    """A namespace that knows Emmert's fact; the LM then finds it false in every document."""
    decisions = Decisions(extract={"[seed]": [EMMERT]})
    h, registry = counted(Harness(decisions, **editor))
    await h.feed(doc("[seed] Mark Emmert leads the NCAA.", 1, "seed"))
    decisions.outdated = {"president of the NCAA": None}
    return h, registry, decisions


async def test_a_document_about_something_else_may_not_make_a_fact_false(
    caplog: pytest.LogCaptureFixture,
) -> None:
    h, registry, _ = await seeded()
    with caplog.at_level(logging.INFO, logger="factstream.edit.pipeline"):
        plan = await edit_document(doc(CREIGHTON, 2, "creighton"), h.ctx)
    assert plan.labels == ["outdated"]  # the LM's verdict, kept as it answered
    assert [p.op for p in plan.planned] == []
    assert list(plan.not_about) == [plan.retrieved[0].fact.fact_id]
    assert plan.not_about[plan.retrieved[0].fact.fact_id].names == ("Emmert", "NCAA")
    assert "rewrite_fact.v2" not in [r.prompt for r in h.lm.requests]  # no rewrite asked
    line = next(r.getMessage() for r in caplog.records if "refused to make fact" in r.getMessage())
    assert "'creighton'" in line and "not_about" in line and "Emmert; NCAA" in line
    task = "classify_facts"
    assert sample(registry, "factstream_lm_refused_total", task=task, reason="not_about") == 1
    checked = "factstream_lm_subject_checked_total"
    assert sample(registry, checked, task=task, outcome="refused") == 1
    assert sample(registry, checked, task=task, outcome="kept") == 0
    assert bound_problem(plan, max_edits=3) is None


async def test_without_the_check_the_same_decision_closes_the_fact() -> None:
    h, _, _ = await seeded(subject_check=False)
    plan = await edit_document(doc(CREIGHTON, 2, "creighton"), h.ctx)
    assert [p.op for p in plan.planned] == [EditOp.CLOSE] and plan.not_about == {}


async def test_a_document_naming_the_subject_by_an_alias_closes_it() -> None:
    h, registry, _ = await seeded()
    edits = await h.feed(doc("Mark Emmert steps down after 12 years.", 2, "emmert"))
    assert [e.op for e in edits] == [EditOp.CLOSE]
    facts = (await h.store.list_facts(NS, include_false=True)).facts
    assert [f.valid_to for f in facts] == [edits[0].event_time]  # closed when it said so
    checked = "factstream_lm_subject_checked_total"
    assert sample(registry, checked, task="classify_facts", outcome="kept") == 1


@pytest.mark.parametrize("mode", ["batched", "per_fact"])
async def test_a_refused_fact_stays_true_and_the_other_edits_go_through(mode: str) -> None:
    h, registry, decisions = await seeded(classify_mode=mode)
    decisions.extract["Creighton"] = ["Alex O'Connell plays for the Creighton Bluejays."]
    edits = await h.feed(doc(CREIGHTON, 2, "creighton"))
    assert [(e.op, e.text) for e in edits] == [
        (EditOp.ADD, "Alex O'Connell plays for the Creighton Bluejays.")
    ]
    facts = (await h.store.list_facts(NS)).facts
    assert sorted(f.text for f in facts if f.truth) == sorted([EMMERT, edits[0].text])
    task = "classify_fact" if mode == "per_fact" else "classify_facts"
    assert sample(registry, "factstream_lm_refused_total", task=task, reason="not_about") == 1


async def test_the_finished_plan_is_checked_again_whatever_built_it() -> None:
    h, _, _ = await seeded(subject_check=False)
    plan = await edit_document(doc(CREIGHTON, 2, "creighton"), h.ctx)
    fact_id = plan.retrieved[0].fact.fact_id
    assert bound_problem(plan, max_edits=3) == (
        f"makes 1 facts false that it does not name: {fact_id}"
    )
    assert bound_problem(plan, max_edits=3, subject_check=False) is None
