"""A fact's history as a timeline: truth spans, its valid interval and the changes, laid out
on one time axis for an inline SVG (``templates/timeline.html`` draws it)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from factstream.topics.records import HistoryEntry

__all__ = ["WIDTH", "Mark", "Span", "Timeline", "layout"]

WIDTH = 800.0  # the SVG's user units; it scales to the page
_MARGIN = 20.0


@dataclass(frozen=True)
class Span:
    """A stretch of the axis: ``[start, end)`` (end None: open), at ``x`` wide ``width``."""

    start: datetime | None
    end: datetime | None
    x: float
    width: float
    truth: bool = True


@dataclass(frozen=True)
class Mark:
    """One change of the fact: the history entry and where it sits."""

    entry: HistoryEntry
    x: float


@dataclass(frozen=True)
class Timeline:
    truths: list[Span]
    valid: Span
    marks: list[Mark]
    ticks: list[tuple[float, str]]


def layout(
    history: list[HistoryEntry], valid_from: datetime | None, valid_to: datetime | None
) -> Timeline:
    """Where each part of a fact's history goes on a WIDTH-wide axis.

    The axis runs from the earliest to the latest time the fact names (a change or an end of
    its valid interval), with a tenth more on the right so an open end reads as open.
    """
    times = [h.ts for h in history] + [t for t in (valid_from, valid_to) if t is not None]
    first, last = min(times), max(times)
    span = max(last - first, timedelta(days=1))
    right = last + span / 10

    def x(t: datetime) -> float:
        return _MARGIN + (WIDTH - 2 * _MARGIN) * ((t - first) / (right - first))

    truths = []
    for entry, after in zip(history, [*history[1:], None], strict=True):
        end = after.ts if after is not None else None
        stop = x(end) if end is not None else WIDTH - _MARGIN
        truths.append(Span(entry.ts, end, x(entry.ts), stop - x(entry.ts), entry.truth))
    valid_start = x(valid_from) if valid_from is not None else _MARGIN
    valid_stop = x(valid_to) if valid_to is not None else WIDTH - _MARGIN
    valid = Span(valid_from, valid_to, valid_start, valid_stop - valid_start)
    marks = [Mark(entry, x(entry.ts)) for entry in history]
    at = [first + (right - first) * i / 4 for i in range(5)]
    ticks = [(x(t), t.date().isoformat()) for t in at]
    return Timeline(truths, valid, marks, ticks)
