"""Fold changelog edits into fact states, pure and idempotent (docs/design.md section 3).

An edit whose ``edit_id`` is already in a fact's history changes nothing, so a batch applied
twice, or a changelog replayed, ends in the same state. History stays in event-time order
and a fact's current truth is its latest entry, so an edit that arrives late never overrides
an entry with a later event time.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from factstream.topics.records import EditOp, Fact, FactEdit, HistoryEntry

__all__ = ["ApplyResult", "apply_edits", "touched_fact_ids"]

log = logging.getLogger(__name__)


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
        replaces=replaces,
    )


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
        closed = _with_entry(old, _entry(edit, False), replaced_by=edit.fact_id)
        return [_new_fact(edit, replaces=old.fact_id), closed], None
    if target is None:
        return [], f"{edit.op.value} of unknown fact {edit.fact_id}"
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
