"""A document's early decision kept current: re-decided as soon as a commit changes its
candidates, stale re-decisions cancelled, and nothing final until its commit takes it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fixtures.hits import T, hit

from factstream.agents.editor import Decision, InputRecord
from factstream.agents.speculation import Speculation
from factstream.edit.conflicts import Conflict
from factstream.edit.pipeline import EditPlan
from factstream.store.base import SearchHit, StoredFact
from factstream.topics.records import Document, InputRef

DOC = Document(id="d9", namespace="desk", kind="article", text="x", timestamp=T)  # type: ignore[arg-type]
RECORD = InputRecord(None, None, InputRef(topic="t", partition=0, offset=9), 0)


def plan(hits: list[SearchHit]) -> EditPlan:
    return EditPlan(DOC, hits, [], [], over_limit=False, vector=[1.0, 0.0])


class Editor:
    """The editor's side a speculation uses: a knowledge base of candidate ids and a count
    of commits; each re-decision waits until the test releases it."""

    def __init__(self, *ids: str) -> None:
        self.kb, self.count = [hit(i) for i in ids], 0
        self.probes = 0
        self.redecisions: list[tuple[list[str], str]] = []  # (candidate ids, at)
        self.cancelled: list[list[str]] = []
        self.release = asyncio.Event()

    def commit(self, *ids: str) -> None:
        self.kb, self.count = [hit(i) for i in ids], self.count + 1

    def commits(self, namespace: str) -> int:
        return self.count

    def could_change(
        self, first: EditPlan, seen: list[SearchHit], changed: list[StoredFact]
    ) -> bool:
        return any(s.fact.fact_id != "far" for s in changed)

    async def decide(self, record: InputRecord, recovered: Any) -> Decision:
        return Decision(plan(list(self.kb)), base=self.count, checked=self.count)

    async def probe(self, first: EditPlan) -> tuple[int, list[SearchHit]]:
        self.probes += 1
        return self.count, list(self.kb)

    async def redecide(
        self, first: EditPlan, now: list[SearchHit], reason: Conflict, at: str
    ) -> EditPlan:
        ids = [h.fact.fact_id for h in now]
        self.redecisions.append((ids, at))
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled.append(ids)
            raise
        return plan(now)


def ids(decision: Decision) -> list[str]:
    assert decision.plan is not None
    return [h.fact.fact_id for h in decision.plan.retrieved]


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


async def start(editor: Editor) -> Speculation:
    """A speculation whose first decision is made."""
    spec = Speculation(editor, RECORD, None)  # type: ignore[arg-type]
    await settle()
    return spec


async def commit(
    editor: Editor, spec: Speculation, *ids: str, changed: tuple[str, ...] = ("new",)
) -> None:
    """An earlier document commits, changing the facts ``changed`` and leaving the
    candidates ``ids``, and pokes ``spec``."""
    editor.commit(*ids)
    spec.poke([StoredFact(hit(i).fact, [1.0, 0.0]) for i in changed])
    await settle()


async def test_a_commit_that_changes_the_candidates_starts_a_re_decision_at_once() -> None:
    editor = Editor("a")
    spec = await start(editor)
    await commit(editor, spec, "a", "b")
    # Decided again on the new candidates before anyone asked for the decision.
    assert editor.redecisions == [(["a", "b"], "early")]
    editor.release.set()
    decision = await spec
    assert ids(decision) == ["a", "b"] and decision.base == 1


async def test_a_re_decision_keeps_what_the_first_decision_found_of_the_document() -> None:
    """Found not applied by its first decision, the document is still found so after an
    early re-decision: its commit need not read the store again (issue 18)."""
    editor = Editor("a")
    spec = await start(editor)
    await commit(editor, spec, "a", "b")
    editor.release.set()
    decision = await spec
    assert ids(decision) == ["a", "b"] and decision.base == 1 and decision.checked == 0


async def test_a_commit_that_leaves_the_candidates_moves_the_decision_forward() -> None:
    editor = Editor("a")
    spec = await start(editor)
    await commit(editor, spec, "a")
    decision = await spec
    assert editor.redecisions == [] and editor.probes == 1
    # Valid as of the commit: the commit's own check has nothing to retrieve again.
    assert ids(decision) == ["a"] and decision.base == 1


async def test_a_newer_commit_cancels_a_stale_re_decision_and_starts_one_on_its_candidates() -> (
    None
):
    editor = Editor("a")
    spec = await start(editor)
    await commit(editor, spec, "a", "b")
    await commit(editor, spec, "a", "b", "c")
    assert editor.cancelled == [["a", "b"]]
    assert editor.redecisions == [(["a", "b"], "early"), (["a", "b", "c"], "early")]
    editor.release.set()
    decision = await spec
    assert ids(decision) == ["a", "b", "c"] and decision.base == 2


async def test_the_commit_waits_for_the_re_decision_under_way() -> None:
    editor = Editor("a")
    spec = await start(editor)
    await commit(editor, spec, "b")
    final = asyncio.ensure_future(spec.final())
    await settle()
    assert not final.done()  # a re-decision is under way: its result is the newer one
    editor.release.set()
    assert ids(await final) == ["b"]


async def test_a_failed_speculative_re_decision_leaves_the_check_to_the_commit() -> None:
    editor = Editor("a")

    async def fails(*_: Any) -> EditPlan:
        raise TimeoutError("the LM is gone")

    editor.redecide = fails  # type: ignore[method-assign]
    spec = await start(editor)
    await commit(editor, spec, "b")
    decision = await spec
    # The first decision, with the base it had: the commit retrieves again and decides.
    assert ids(decision) == ["a"] and decision.base == 0


async def test_the_first_decision_s_error_is_the_commit_s() -> None:
    editor = Editor("a")

    async def fails(*_: Any) -> Decision:
        raise TimeoutError("the store is gone")

    editor.decide = fails  # type: ignore[method-assign]
    with pytest.raises(TimeoutError, match="store is gone"):
        await (await start(editor))


async def test_a_commit_whose_changes_cannot_reach_the_candidates_retrieves_nothing() -> None:
    editor = Editor("a")
    spec = await start(editor)
    await commit(editor, spec, "a", changed=("far",))  # too far from the document to enter
    await commit(editor, spec, "a", changed=())  # an empty commit: no fact changed
    decision = await spec
    assert editor.probes == 0 and editor.redecisions == []
    assert decision.base == 0  # not checked early: the commit's own check retrieves again


async def test_a_commit_whose_changes_are_not_known_is_checked() -> None:
    editor = Editor("a")
    spec = await start(editor)
    editor.commit("a", "b")
    spec.poke(None)  # a commit that failed part way may have changed anything
    await settle()
    assert editor.redecisions == [(["a", "b"], "early")]


async def test_a_document_far_from_its_turn_waits_and_then_checks_what_it_missed() -> None:
    editor = Editor("a")
    spec = await start(editor)
    editor.commit("a", "b")
    spec.poke([StoredFact(hit("b").fact, [1.0, 0.0])], now=False)  # far: nothing yet
    await settle()
    assert editor.probes == 0 and editor.redecisions == []
    spec.poke([], now=True)  # an empty commit brings it near: it checks the earlier one
    await settle()
    assert editor.redecisions == [(["a", "b"], "early")]


async def test_a_first_decision_that_failed_on_an_older_knowledge_base_is_made_again() -> None:
    editor = Editor("a")
    started = asyncio.Event()

    async def fails(*_: Any) -> Decision:
        started.set()
        await asyncio.sleep(0.01)
        raise ValueError("invalid LM output on the candidates of then")

    editor.decide = fails  # type: ignore[method-assign]
    spec = Speculation(editor, RECORD, None, namespace="desk")  # type: ignore[arg-type]
    await started.wait()
    editor.commit("a", "b")  # an earlier document commits while it is being decided
    decision = await spec
    # Not the commit's error: it decides the document afresh (no plan to keep).
    assert decision.plan is None and decision.recovered is None
    unchanged = Speculation(editor, RECORD, None, namespace="desk")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="invalid LM output"):
        await unchanged  # nothing committed since: the error is the commit's, as serially
