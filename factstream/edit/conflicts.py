"""Did the knowledge base change under a decision? (docs/design.md section 5, serial-equivalent)

A document decided while earlier documents of its namespace were still being committed saw
the knowledge base as it stood then. At its own commit its retrieval runs again; the decision
stands only if the LM would be shown exactly the same candidates: the same facts (ids), with
the same texts and truth at the document's event time, in the same order. Anything else is a
conflict, and the document is decided again on what it retrieves now.

The candidates are compared in the order the LM is shown them (``pipeline.shown_order``:
oldest first, then by text), which does not depend on their scores, so candidates that
only ranked differently are no conflict. A document decided again asks the LM only the
prompts that changed (``EditPlan.answers``): with ``classify_mode`` per_fact, a fact added
elsewhere in the list costs its own classification (and the rewrites, whose prompts list
the facts still true), not the others'.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum

from factstream.store.base import SearchHit

__all__ = ["Conflict", "conflict"]


class Conflict(StrEnum):
    """Why a decision was made again (a metric label)."""

    ADDED = "added"  # a fact is a candidate now that was not then
    REMOVED = "removed"  # a fact that was a candidate is not any more
    CHANGED = "changed"  # the same fact with another text or truth
    REORDERED = "reordered"  # the same candidates in another order (not in shown order)


Candidate = tuple[str, str, bool | None]


def _candidates(hits: Sequence[SearchHit], event_time: datetime) -> list[Candidate]:
    return [(hit.fact.fact_id, hit.fact.text, hit.fact.truth_at(event_time)) for hit in hits]


def conflict(
    seen: Sequence[SearchHit], now: Sequence[SearchHit], event_time: datetime
) -> Conflict | None:
    """How the candidates ``now`` differ from those a decision ``seen``; None if they do not.

    Args:
        seen: The candidates the decision was made on, in retrieval order.
        now: The document's candidates retrieved again, after every earlier document.
        event_time: The document's event time (truth is compared at it).
    """
    before, after = _candidates(seen, event_time), _candidates(now, event_time)
    if before == after:
        return None
    ids_before, ids_after = {c[0] for c in before}, {c[0] for c in after}
    if ids_after - ids_before:
        return Conflict.ADDED
    if ids_before - ids_after:
        return Conflict.REMOVED
    if {c[0]: c[1:] for c in before} != {c[0]: c[1:] for c in after}:
        return Conflict.CHANGED
    return Conflict.REORDERED
