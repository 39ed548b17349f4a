"""Folding edits into facts: every op, idempotence, late events, history order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from factstream.edit.apply import apply_edits, touched_fact_ids
from factstream.topics.records import EditOp, Fact, FactEdit, edit_id_for, fact_id_for

NS = "desk"
T0 = datetime(2023, 1, 1, tzinfo=UTC)


def edit(
    doc: str, pos: int, op: EditOp, day: int, *, fact: str | None = None, **kw: Any
) -> FactEdit:
    if op is EditOp.REWRITE:
        kw.setdefault("previous_text", "old")
    return FactEdit(
        edit_id=edit_id_for(NS, doc, pos),
        namespace=NS,
        fact_id=fact or fact_id_for(NS, doc, pos),
        op=op,
        text=kw.pop("text", f"fact from {doc}#{pos}"),
        truth=op in (EditOp.ADD, EditOp.REINFORCE, EditOp.REWRITE),
        event_time=T0 + timedelta(days=day),
        document_id=doc,
        batch={"id": doc, "size": pos + 1, "position": pos},  # type: ignore[arg-type]
        input={"topic": "docs", "partition": 0, "offset": day},  # type: ignore[arg-type]
        decided_by={"model": "m", "prompt_version": "p.v1"},  # type: ignore[arg-type]
        created_at=T0,
        **kw,
    )


def added(doc: str = "d1", day: int = 0) -> tuple[Fact, FactEdit]:
    e = edit(doc, 0, EditOp.ADD, day)
    return apply_edits({}, [e]).changed[e.fact_id], e


def test_add_creates_a_true_fact_with_one_history_entry() -> None:
    fact, e = added()
    assert fact.truth and fact.text == e.text and fact.first_seen == e.event_time
    assert [(h.ts, h.truth, h.edit_id) for h in fact.history] == [(e.event_time, True, e.edit_id)]


def test_invalidate_keeps_the_fact_readable_with_its_history() -> None:
    fact, _ = added()
    inv = edit("d2", 0, EditOp.INVALIDATE, 5, fact=fact.fact_id)
    after = apply_edits({fact.fact_id: fact}, [inv]).changed[fact.fact_id]
    assert not after.truth and after.text == fact.text
    assert [h.truth for h in after.history] == [True, False]
    assert after.truth_at(T0 + timedelta(days=4)) is True
    assert after.truth_at(T0 + timedelta(days=5)) is False
    assert after.last_changed == T0 + timedelta(days=5)


def test_rewrite_creates_a_linked_fact_and_closes_the_old_one() -> None:
    old, _ = added()
    rw = edit("d2", 0, EditOp.REWRITE, 3, replaces=old.fact_id, previous_text=old.text, text="new")
    changed = apply_edits({old.fact_id: old}, [rw]).changed
    new, closed = changed[rw.fact_id], changed[old.fact_id]
    assert new.truth and new.text == "new" and new.replaces == old.fact_id
    assert not closed.truth and closed.replaced_by == new.fact_id
    assert closed.history[-1].edit_id == rw.edit_id
    assert touched_fact_ids([rw]) == {rw.fact_id, old.fact_id}


def test_reinforce_appends_a_true_entry() -> None:
    fact, _ = added()
    again = edit("d3", 0, EditOp.REINFORCE, 9, fact=fact.fact_id)
    after = apply_edits({fact.fact_id: fact}, [again]).changed[fact.fact_id]
    assert after.truth and len(after.history) == 2 and after.last_changed == again.event_time


def test_applying_twice_changes_nothing() -> None:
    fact, _ = added()
    batch = [edit("d2", 0, EditOp.INVALIDATE, 5, fact=fact.fact_id), edit("d2", 1, EditOp.ADD, 5)]
    first = apply_edits({fact.fact_id: fact}, batch)
    second = apply_edits(first.changed, batch)
    assert second.changed == {} and second.skipped == []


def test_a_late_invalidation_never_overrides_a_later_reinforcement() -> None:
    fact, _ = added(day=0)
    later = edit("d3", 0, EditOp.REINFORCE, 10, fact=fact.fact_id)
    state = apply_edits({fact.fact_id: fact}, [later]).changed
    late = edit("d2", 0, EditOp.INVALIDATE, 5, fact=fact.fact_id)  # arrives after, happened before
    after = apply_edits(state, [late]).changed[fact.fact_id]
    assert after.truth  # the latest event (day 10) still says true
    assert [h.ts.day for h in after.history] == [1, 6, 11]
    assert after.truth_at(T0 + timedelta(days=7)) is False


def test_edits_of_unknown_facts_are_skipped_with_a_reason() -> None:
    result = apply_edits({}, [edit("d2", 0, EditOp.INVALIDATE, 1, fact="ghost")])
    assert result.changed == {} and "unknown fact ghost" in result.skipped[0][1]


@given(st.lists(st.tuples(st.integers(0, 30), st.booleans()), min_size=1, max_size=12))
def test_history_stays_in_event_time_order_whatever_the_arrival_order(
    events: list[tuple[int, bool]],
) -> None:
    fact, _ = added(day=0)
    state = {fact.fact_id: fact}
    for i, (day, truth) in enumerate(events):
        op = EditOp.REINFORCE if truth else EditOp.INVALIDATE
        state.update(apply_edits(state, [edit(f"doc{i}", 0, op, day, fact=fact.fact_id)]).changed)
    final = state[fact.fact_id]
    times = [h.ts for h in final.history]
    assert times == sorted(times) and len(times) == len(events) + 1
    assert final.truth == final.history[-1].truth
