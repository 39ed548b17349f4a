"""Valid time in the fold: intervals of new facts, updates close, corrections invalidate."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from factstream.edit.apply import apply_edits
from factstream.store.rules import valid_interval
from factstream.temporal.intervals import ValidInterval
from factstream.topics.records import (
    ChangeKind,
    EditOp,
    Fact,
    FactEdit,
    accepted_versions,
    edit_id_for,
    fact_id_for,
)

NS = "desk"
T0 = datetime(2023, 1, 1, tzinfo=UTC)


def day(n: float) -> datetime:
    return T0 + timedelta(days=n)


def edit(doc: str, pos: int, op: EditOp, at: float, **kw: Any) -> FactEdit:
    if op is EditOp.REWRITE:
        kw.setdefault("previous_text", "old")
    return FactEdit(
        edit_id=edit_id_for(NS, doc, pos),
        namespace=NS,
        fact_id=kw.pop("fact", None) or fact_id_for(NS, doc, pos),
        op=op,
        text=kw.pop("text", f"fact from {doc}#{pos}"),
        truth=op is not EditOp.INVALIDATE,
        event_time=day(at),
        document_id=doc,
        batch={"id": doc, "size": pos + 1, "position": pos},  # type: ignore[arg-type]
        input={"topic": "docs", "partition": 0, "offset": int(at)},  # type: ignore[arg-type]
        decided_by={"model": "m", "prompt_version": "p.v1"},  # type: ignore[arg-type]
        created_at=T0,
        **kw,
    )


def add(at: float = 0, **kw: Any) -> tuple[Fact, FactEdit]:
    e = edit(f"add-{at}-{kw.get('text', '')}", 0, EditOp.ADD, at, **kw)
    return apply_edits({}, [e]).changed[e.fact_id], e


def test_a_new_fact_is_valid_from_its_event_time_unless_the_edit_says_otherwise() -> None:
    plain, _ = add(5)
    assert (plain.valid_from, plain.valid_to) == (day(5), None)
    given_, _ = add(5, valid_from=day(-100), valid_to=day(100))
    assert (given_.valid_from, given_.valid_to) == (day(-100), day(100))
    ahead, _ = add(5, valid_to=day(30))  # "interim CEO until ...": from now until then
    assert (ahead.valid_from, ahead.valid_to) == (day(5), day(30))
    past, _ = add(5, valid_to=day(2))  # "the former CEO": held until before the document
    assert (past.valid_from, past.valid_to) == (None, day(2))
    assert valid_interval(past) == ValidInterval(None, day(2))


def test_an_update_closes_the_old_fact_which_stays_true_of_its_interval() -> None:
    old, _ = add(0, valid_from=day(-50))
    rw = edit("d2", 0, EditOp.REWRITE, 10, replaces=old.fact_id, change="update", valid_from=day(8))
    changed = apply_edits({old.fact_id: old}, [rw]).changed
    new, closed = changed[rw.fact_id], changed[old.fact_id]
    assert closed.truth and closed.history == old.history
    assert (closed.valid_from, closed.valid_to) == (day(-50), day(8))
    assert closed.replaced_by == new.fact_id and new.replaces == old.fact_id
    assert (new.valid_from, new.valid_to, new.truth) == (day(8), None, True)
    # Without a start for the new fact the old one closes at the event time.
    rw2 = edit("d3", 0, EditOp.REWRITE, 10, replaces=old.fact_id, change="update")
    assert apply_edits({old.fact_id: old}, [rw2]).changed[old.fact_id].valid_to == day(10)


def test_a_world_change_is_known_from_its_event_time() -> None:
    old, _ = add(0)
    rw = edit("d2", 0, EditOp.REWRITE, 10, replaces=old.fact_id, change="update", valid_from=day(8))
    closed = apply_edits({old.fact_id: old}, [rw]).changed[old.fact_id]
    assert closed.closed_at == day(10)
    assert valid_interval(closed) == ValidInterval(day(0), day(8))
    assert valid_interval(closed, as_of=day(9)) == ValidInterval(day(0), None)  # not yet known
    assert valid_interval(closed, as_of=day(10)) == ValidInterval(day(0), day(8))


def test_a_fact_stored_as_version_1_is_written_as_the_latest_when_closed() -> None:
    fact, _ = add(0)
    v1 = Fact.model_validate({**fact.model_dump(exclude={"valid_from"}), "schema_version": 1})
    close = edit("d2", 0, EditOp.CLOSE, 20, fact=fact.fact_id, valid_to=day(15))
    after = apply_edits({fact.fact_id: v1}, [close]).changed[fact.fact_id]
    latest = max(accepted_versions(Fact))
    assert after.schema_version == latest and after.closed_at == day(20)
    assert Fact.from_bytes(after.to_bytes()) == after
    reinforce = edit("d3", 0, EditOp.REINFORCE, 30, fact=fact.fact_id)
    assert (
        apply_edits({fact.fact_id: v1}, [reinforce]).changed[fact.fact_id].schema_version == latest
    )


def test_a_correction_or_an_unstated_change_invalidates_as_before() -> None:
    old, _ = add(0)
    for change in (ChangeKind.CORRECTION, None):
        rw = edit("d2", 0, EditOp.REWRITE, 10, replaces=old.fact_id, change=change)
        closed = apply_edits({old.fact_id: old}, [rw]).changed[old.fact_id]
        assert not closed.truth and closed.valid_to is None
        assert [h.truth for h in closed.history] == [True, False]


def test_a_close_ends_the_interval_and_keeps_truth_and_history() -> None:
    fact, _ = add(0)
    close = edit("d2", 0, EditOp.CLOSE, 20, fact=fact.fact_id, valid_to=day(15))
    after = apply_edits({fact.fact_id: fact}, [close]).changed[fact.fact_id]
    assert after.truth and after.history == fact.history
    assert (after.valid_from, after.valid_to) == (day(0), day(15))
    assert apply_edits({fact.fact_id: after}, [close]).changed == {}  # idempotent


def test_a_fact_from_before_valid_time_closes_from_its_first_seen() -> None:
    fact, _ = add(3)
    legacy = fact.model_copy(update={"valid_from": None})
    assert valid_interval(legacy) == ValidInterval(day(3), None)
    close = edit("d2", 0, EditOp.CLOSE, 20, fact=fact.fact_id, valid_to=day(15))
    after = apply_edits({fact.fact_id: legacy}, [close]).changed[fact.fact_id]
    assert (after.valid_from, after.valid_to) == (day(3), day(15))


def test_a_close_at_or_before_the_start_keeps_the_end_and_opens_the_start() -> None:
    fact, _ = add(10)
    close = edit("d2", 0, EditOp.CLOSE, 20, fact=fact.fact_id, valid_to=day(4))
    after = apply_edits({fact.fact_id: fact}, [close]).changed[fact.fact_id]
    assert (after.valid_from, after.valid_to) == (None, day(4))


def test_a_close_of_an_unknown_fact_is_skipped() -> None:
    result = apply_edits({}, [edit("d2", 0, EditOp.CLOSE, 1, fact="ghost", valid_to=day(1))])
    assert result.changed == {} and "close of unknown fact ghost" in result.skipped[0][1]


@given(
    start=st.integers(0, 40),
    ends=st.lists(st.integers(0, 60), min_size=1, max_size=5),
    order=st.randoms(use_true_random=False),
)
def test_closes_commute_the_earliest_end_wins(start: int, ends: list[int], order: Any) -> None:
    fact, _ = add(start)
    closes = [
        edit(f"c{i}", 0, EditOp.CLOSE, 70, fact=fact.fact_id, valid_to=day(end))
        for i, end in enumerate(ends)
    ]

    def fold(edits: list[FactEdit]) -> Fact:
        state = {fact.fact_id: fact}
        for e in edits:
            state.update(apply_edits(state, [e]).changed)
        return state[fact.fact_id]

    shuffled = list(closes)
    order.shuffle(shuffled)
    first, second = fold(closes), fold(shuffled)
    assert first == second
    assert first.valid_to == day(min(ends)) and first.closed_at == day(70)
    assert first.valid_from == (day(start) if start < min(ends) else None)
    assert first.truth and first.history == fact.history


def test_an_edit_s_structure_reaches_its_fact_and_comes_whole_or_not_at_all() -> None:
    triple = {"subject": "Ana", "relation": "lives in", "object": "Lisbon", "object_type": "place"}
    fact, _ = add(1, text="Ana lives in Lisbon.", **triple)
    assert (fact.subject, fact.relation, fact.object, fact.object_type) == tuple(triple.values())
    plain, _ = add(1, text="Ana sings.")
    assert (plain.subject, plain.relation, plain.object, plain.object_type) == (None,) * 4
    with pytest.raises(ValidationError, match="come together"):
        add(1, text="Ana lives in Lisbon.", subject="Ana", relation="lives in")
    with pytest.raises(ValidationError, match="carries no structure"):
        edit("d", 0, EditOp.REINFORCE, 1, **triple)
    with pytest.raises(ValidationError, match="schema version 2"):
        add(1, text="Ana lives in Lisbon.", schema_version=1, **triple)
