"""Fold changelog edits into fact states, pure and idempotent (docs/design.md section 3).

An edit whose ``edit_id`` is already in a fact's history changes nothing, so a batch applied
twice, or a changelog replayed, ends in the same state. History stays in event-time order
and a fact's current truth is its latest entry, so an edit that arrives late never overrides
an entry with a later event time.

Valid time (when a fact holds in the world) is set, not logged: an added or rewritten fact
takes the edit's interval (valid from the event time when the edit gives no start); a world
change (``close``, or a rewrite that is an ``update``) ends the old fact's interval, records
when that became known (``closed_at``, so reads as of an earlier time see it open) and
leaves its truth and history alone, while a correction (or a change of no stated kind)
makes it false as before. An interval only ever shrinks: of several closes the earliest end
wins, whatever order they arrive in, and applying one twice changes nothing. An added or
rewritten fact keeps the turns its edit cites (``turn_ids``: where in its conversation it
was said).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from factstream.store.rules import valid_interval
from factstream.topics.records import (
    ChangeKind,
    EditOp,
    Fact,
    FactEdit,
    HistoryEntry,
    accepted_versions,
)

__all__ = ["ApplyResult", "apply_edits", "touched_fact_ids"]

log = logging.getLogger(__name__)

# A fact an edit changes is written as the latest version (it may gain closed_at).
_LATEST = max(accepted_versions(Fact))
# An end the fact was written with (not set by a close) counts as known from always.
_SINCE_ALWAYS = datetime.min.replace(tzinfo=UTC)


@dataclass
class ApplyResult:
    """The facts an application changed (by id) and the edits it could not apply."""

    changed: dict[str, Fact] = field(default_factory=dict)
    skipped: list[tuple[FactEdit, str]] = field(default_factory=list)


def touched_fact_ids(edits: Iterable[FactEdit]) -> set[str]:
    """Every fact id the edits read or write (rewrites also touch the fact they replace)."""
    ids: set[str] = set()
    for edit in edits:
        ids.add(edit.fact_id)
        if edit.replaces:
            ids.add(edit.replaces)
    return ids


def _entry(edit: FactEdit, truth: bool) -> HistoryEntry:
    return HistoryEntry(
        ts=edit.event_time, truth=truth, document_id=edit.document_id, edit_id=edit.edit_id
    )


def _with_entry(fact: Fact, entry: HistoryEntry, **changes: object) -> Fact:
    """``fact`` with ``entry`` inserted at its event time (after equal times)."""
    history = list(fact.history)
    at = len(history)
    while at > 0 and history[at - 1].ts > entry.ts:
        at -= 1
    history.insert(at, entry)
    return fact.model_copy(
        update={
            "schema_version": _LATEST,
            "history": history,
            "truth": history[-1].truth,
            "first_seen": history[0].ts,
            "last_changed": history[-1].ts,
            **changes,
        }
    )


def _new_fact(edit: FactEdit, *, replaces: str | None = None) -> Fact:
    entry = _entry(edit, True)
    return Fact(
        fact_id=edit.fact_id,
        namespace=edit.namespace,
        text=edit.text,
        truth=True,
        history=[entry],
        first_seen=entry.ts,
        last_changed=entry.ts,
        valid_from=_start(edit),
        valid_to=edit.valid_to,
        replaces=replaces,
        subject=edit.subject,
        relation=edit.relation,
        object=edit.object,
        object_type=edit.object_type,
        turn_ids=edit.turn_ids,
    )


def _start(edit: FactEdit) -> datetime | None:
    """The new fact's valid_from: the edit's, else the event time, unless the interval the
    edit gives ends by then (a past state: its start is unknown, so open)."""
    if edit.valid_from is not None:
        return edit.valid_from
    if edit.valid_to is not None and edit.valid_to <= edit.event_time:
        return None
    return edit.event_time


def _closed(fact: Fact, end: datetime, edit: FactEdit, **changes: object) -> Fact:
    """``fact`` with its valid interval ended at ``end`` by ``edit`` (a world change).

    Truth and history stay: the fact remains true of the interval. Of several ends the
    earliest wins (then the earliest-known one), so closes commute; ``closed_at`` is the
    event time of the edit that set it. A start at or after the end was a default or a
    mistake; what the close says (it held until ``end``) wins, and the start is left open.
    """
    interval = valid_interval(fact)
    known = (interval.end, fact.closed_at or _SINCE_ALWAYS) if interval.end else None
    if known is not None and known <= (end, edit.event_time):
        return fact.model_copy(update={"schema_version": _LATEST, **changes}) if changes else fact
    start = interval.start
    if start is not None and start >= end:
        log.warning("fact %s closed at %s, not after its start %s", fact.fact_id, end, start)
        start = None
    update = {
        "schema_version": _LATEST,
        "valid_from": start,
        "valid_to": end,
        "closed_at": edit.event_time,
        **changes,
    }
    return fact.model_copy(update=update)


def _applied(fact: Fact | None, edit: FactEdit) -> bool:
    return fact is not None and any(e.edit_id == edit.edit_id for e in fact.history)


def _apply_one(facts: dict[str, Fact], edit: FactEdit) -> tuple[list[Fact], str | None]:
    """The facts ``edit`` changes, or the reason it cannot apply."""
    target = facts.get(edit.fact_id)
    if _applied(target, edit):
        return [], None
    if edit.op is EditOp.ADD:
        if target is not None:
            return [], f"fact {edit.fact_id} already exists"
        return [_new_fact(edit)], None
    if edit.op is EditOp.REWRITE:
        old = facts.get(edit.replaces or "")
        if old is None:
            return [], f"rewritten fact {edit.replaces} is unknown"
        if target is not None:
            return [], f"fact {edit.fact_id} already exists"
        if edit.change is ChangeKind.UPDATE:
            end = edit.valid_from or edit.event_time
            closed = _closed(old, end, edit, replaced_by=edit.fact_id)
        else:
            closed = _with_entry(old, _entry(edit, False), replaced_by=edit.fact_id)
        return [_new_fact(edit, replaces=old.fact_id), closed], None
    if target is None:
        return [], f"{edit.op.value} of unknown fact {edit.fact_id}"
    if edit.op is EditOp.CLOSE:
        assert edit.valid_to is not None  # noqa: S101 - FactEdit requires it of a close
        closed = _closed(target, edit.valid_to, edit)
        return ([closed] if closed != target else []), None
    return [_with_entry(target, _entry(edit, edit.op is EditOp.REINFORCE))], None


def apply_edits(current: Mapping[str, Fact], edits: Sequence[FactEdit]) -> ApplyResult:
    """Apply ``edits`` in order to ``current`` (the stored facts they touch, by id).

    Args:
        current: the facts as stored now; facts not in it are taken not to exist.
        edits: one document's batch, in batch order.

    Returns:
        The new state of every fact that changed, and the edits skipped with why.
    """
    facts = dict(current)
    result = ApplyResult()
    for edit in edits:
        changed, problem = _apply_one(facts, edit)
        if problem is not None:
            log.warning("edit %s skipped: %s", edit.edit_id, problem)
            result.skipped.append((edit, problem))
        for fact in changed:
            facts[fact.fact_id] = fact
            result.changed[fact.fact_id] = fact
    return result
