"""Facts for the store tests: a history given as (day, truth) changes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from factstream.store.base import StoredFact
from factstream.topics.records import Fact, HistoryEntry

__all__ = ["DAY0", "day", "make_fact", "stored"]

DAY0 = datetime(2024, 1, 1, tzinfo=UTC)


def day(n: float) -> datetime:
    """``n`` days after DAY0."""
    return DAY0 + timedelta(days=n)


def make_fact(
    fact_id: str,
    text: str = "",
    changes: Sequence[tuple[float, bool]] = ((0, True),),
    namespace: str = "desk-a",
    **extra: Any,
) -> Fact:
    """A fact whose history holds ``changes``; truth, first_seen, last_changed follow it."""
    history = [
        HistoryEntry(ts=day(d), truth=truth, document_id=f"doc-{d}", edit_id=f"{fact_id}-{i}")
        for i, (d, truth) in enumerate(changes)
    ]
    return Fact(
        fact_id=fact_id,
        namespace=namespace,
        text=text or f"fact {fact_id}",
        truth=history[-1].truth,
        history=history,
        first_seen=history[0].ts,
        last_changed=history[-1].ts,
        **extra,
    )


def stored(fact: Fact, vector: Sequence[float] = (1.0, 0.0, 0.0)) -> StoredFact:
    """``fact`` with its vector."""
    return StoredFact(fact, list(vector))
