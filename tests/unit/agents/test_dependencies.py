"""Predicted dependencies: a document waits for the commit of an earlier one whose planned
edits may change its candidates, and goes ahead past the ones that cannot."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest
from fixtures.hits import T, hit

from factstream.agents.dependencies import Gate, Policy, Track, Verdict
from factstream.edit.pipeline import EditPlan, Extraction, PlannedEdit
from factstream.lm.tasks.facts import NewFact
from factstream.metrics import Metrics
from factstream.store.base import SearchHit, StoredFact
from factstream.topics.records import DecidedBy, Document, EditOp

BY = DecidedBy(model="m", prompt_version="p.v1")


def doc(name: str) -> Document:
    return Document(id=name, namespace="desk", kind="article", text=name, timestamp=T)  # type: ignore[arg-type]


def plan(name: str, *ids: str, adds: Sequence[str] = ()) -> EditPlan:
    """A plan of document ``name`` with the candidates ``ids`` and extracted ``adds``."""
    extraction = Extraction([NewFact.from_text(text, T) for text in adds], BY)
    return EditPlan(
        doc(name), [hit(i) for i in ids], [], [], over_limit=False, vector=[1.0, 0.0],
        extraction=extraction,
    )  # fmt: skip


class Predictor:
    """The editor's side: candidates by commit, and a ranking in which only facts about
    the mayor enter a document's candidates."""

    def __init__(self, *ids: str) -> None:
        self.kb, self.count, self.probes, self.embedded = list(ids), 0, 0, 0

    def commits(self, namespace: str) -> int:
        return self.count

    def commit(self, *ids: str) -> None:
        self.kb, self.count = list(ids), self.count + 1

    async def probe(self, plan: EditPlan) -> tuple[int, list[SearchHit]]:
        self.probes += 1
        return self.count, [hit(i) for i in self.kb]

    def could_change(
        self, plan: EditPlan, seen: Sequence[SearchHit], changed: Sequence[StoredFact]
    ) -> bool:
        return any("mayor" in s.fact.text for s in changed)

    async def embed(self, texts: list[str]) -> list[list[float]]:
        self.embedded += len(texts)
        return [[1.0, 0.0] for _ in texts]


def gate(predictor: Predictor, earlier: list[Track], policy: Policy = "extraction") -> Gate:
    own = Track(asyncio.Event())
    metrics = Metrics.create().worker
    return Gate(predictor, "desk", own, lambda: [t for t in earlier if not t.committed.is_set()],
                policy, metrics)  # fmt: skip


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def test_planned_adds_that_enter_the_candidates_make_a_dependency() -> None:
    predictor, earlier = Predictor("a"), Track(asyncio.Event())
    g = gate(predictor, [earlier])
    mine = plan("d2", "a")
    assert await g.verdict(earlier, mine, mine.retrieved) is Verdict.NO_EXTRACTION
    earlier.drafting(plan("d1", "b", adds=["Line 1 is open."]))
    assert await g.verdict(earlier, mine, mine.retrieved) is Verdict.NO_JUDGEMENT
    earlier.drafting(plan("d1", "b", adds=["The mayor is Ann."]))
    assert await g.verdict(earlier, mine, mine.retrieved) is Verdict.DEPENDS
    assert predictor.embedded == 2  # each planned text embedded once


async def test_a_judged_plan_depends_on_what_it_ends_not_on_what_it_reinforces() -> None:
    predictor, earlier = Predictor("a"), Track(asyncio.Event())
    g = gate(predictor, [earlier])
    mine = plan("d2", "a")
    judged = plan("d1", "a", "b")
    judged.planned = [PlannedEdit(EditOp.REINFORCE, "Fact a.", BY, "a")]
    earlier.decided(judged)
    assert await g.verdict(earlier, mine, mine.retrieved) is Verdict.NO
    judged.planned = [PlannedEdit(EditOp.INVALIDATE, "Fact a.", BY, "a")]
    assert await g.verdict(earlier, mine, mine.retrieved) is Verdict.DEPENDS
    earlier.decided(None, recovered=True)  # a batch off the changelog: may change anything
    assert await g.verdict(earlier, mine, mine.retrieved) is Verdict.DEPENDS
    earlier.decided(None)  # bad input, a duplicate: changes nothing
    assert await g.verdict(earlier, mine, mine.retrieved) is Verdict.NO


async def test_a_dependent_document_waits_for_the_commit_and_judges_on_its_candidates() -> None:
    predictor = Predictor("a")
    near, far = Track(asyncio.Event()), Track(asyncio.Event())
    far.drafting(plan("d0", adds=["The mayor is Bo."]))
    near.drafting(plan("d1", adds=["Line 1 is open."]))
    near.decided(plan("d1", adds=["Line 1 is open."]))
    g = gate(predictor, [far, near])
    judging = asyncio.ensure_future(g.judge_on(plan("d2", "a")))
    await settle()
    assert not judging.done()  # d0's mayor will enter its candidates
    predictor.commit("a", "mayor")
    far.committed.set()
    hits = await asyncio.wait_for(judging, 1)
    assert [h.fact.fact_id for h in hits] == ["a", "mayor"] and g.base == 1
    assert predictor.probes == 1


async def test_a_document_no_earlier_plan_can_change_goes_ahead_at_once() -> None:
    predictor, earlier = Predictor("a"), Track(asyncio.Event())
    earlier.decided(plan("d1", adds=["Line 1 is open."]))
    g = gate(predictor, [earlier])
    hits = await asyncio.wait_for(g.judge_on(plan("d2", "a")), 1)
    assert [h.fact.fact_id for h in hits] == ["a"] and predictor.probes == 0 and g.base == 0


@pytest.mark.parametrize(
    ("policy", "waits_for_extraction", "waits_for_judgement"),
    [("speculate", False, False), ("extraction", True, False), ("wait", True, True)],
)
async def test_an_unknown_earlier_plan_is_waited_for_as_the_policy_says(
    policy: Policy, waits_for_extraction: bool, waits_for_judgement: bool
) -> None:
    predictor, earlier = Predictor("a"), Track(asyncio.Event())
    judging = asyncio.ensure_future(gate(predictor, [earlier], policy).judge_on(plan("d2", "a")))
    await settle()
    assert judging.done() is not waits_for_extraction
    earlier.drafting(plan("d1", "b", adds=["Line 1 is open."]))  # its extraction is known
    await settle()
    assert judging.done() is not waits_for_judgement
    earlier.decided(plan("d1", "b"))
    await asyncio.wait_for(judging, 1)
