"""The timeline's layout: spans cover the axis in order, ends where the history says."""

from __future__ import annotations

from datetime import UTC, datetime

from factstream.api.console.timeline import WIDTH, layout
from factstream.topics.records import HistoryEntry

T = [datetime(2020 + i, 1, 1, tzinfo=UTC) for i in range(5)]


def entry(ts: datetime, truth: bool) -> HistoryEntry:
    return HistoryEntry(ts=ts, truth=truth, document_id=f"d{ts.year}", edit_id=f"e{ts.year}")


def test_spans_follow_the_history_and_the_last_stays_open() -> None:
    line = layout([entry(T[0], True), entry(T[2], False)], T[0], T[3])
    first, last = line.truths
    assert (first.truth, last.truth) == (True, False)
    assert (first.start, first.end, last.start, last.end) == (T[0], T[2], T[2], None)
    assert first.x < last.x and abs(first.x + first.width - last.x) < 1e-9
    assert last.x + last.width == WIDTH - 20  # open: to the right edge
    assert line.valid.x == first.x and line.valid.x + line.valid.width < WIDTH - 20
    assert [m.x for m in line.marks] == [first.x, last.x]
    assert line.ticks[0] == (first.x, "2020-01-01")
    assert [label for _, label in line.ticks] == sorted(label for _, label in line.ticks)


def test_an_open_valid_interval_spans_the_axis_and_a_late_end_widens_it() -> None:
    line = layout([entry(T[1], True)], None, None)
    assert line.valid.start is None and line.valid.x == 20
    assert line.valid.x + line.valid.width == WIDTH - 20
    later = layout([entry(T[1], True)], T[0], T[4])  # valid from before the first change
    assert later.valid.x == 20 and later.truths[0].x > 20
