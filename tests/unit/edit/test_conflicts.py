"""A decision's candidates against those retrieved again at its commit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from factstream.edit.conflicts import Conflict, conflict
from factstream.store.base import SearchHit
from factstream.topics.records import Fact, HistoryEntry

T = datetime(2024, 1, 1, tzinfo=UTC)


def hit(fact_id: str, text: str | None = None, *, false_from: datetime | None = None) -> SearchHit:
    history = [HistoryEntry(ts=T, truth=True, document_id="seed", edit_id=f"e-{fact_id}")]
    if false_from is not None:
        history.append(
            HistoryEntry(ts=false_from, truth=False, document_id="later", edit_id=f"x-{fact_id}")
        )
    fact = Fact(
        fact_id=fact_id,
        namespace="desk",
        text=text or f"Fact {fact_id}.",
        truth=false_from is None,
        history=history,
        first_seen=T,
        last_changed=history[-1].ts,
    )
    return SearchHit(fact, similarity=0.9, score=0.5)


AT = T + timedelta(days=10)


@pytest.mark.parametrize(
    ("now", "reason"),
    [
        ([hit("a"), hit("b")], None),
        ([hit("a"), hit("b"), hit("c")], Conflict.ADDED),
        ([hit("a"), hit("c")], Conflict.ADDED),  # one gone, one new: the new one counts
        ([hit("a")], Conflict.REMOVED),
        ([hit("a"), hit("b", "Fact b, rewritten.")], Conflict.CHANGED),
        ([hit("a"), hit("b", false_from=AT - timedelta(days=1))], Conflict.CHANGED),
        ([hit("b"), hit("a")], Conflict.REORDERED),
    ],
)
def test_what_the_decision_saw_against_now(now: list[SearchHit], reason: Conflict | None) -> None:
    assert conflict([hit("a"), hit("b")], now, AT) == reason


def test_scores_and_truth_after_the_event_time_are_not_a_conflict() -> None:
    later = hit("b", false_from=AT + timedelta(days=1))  # made false after the event time
    rescored = SearchHit(hit("a").fact, similarity=0.1, score=0.99)
    assert conflict([hit("a"), hit("b")], [rescored, later], AT) is None
