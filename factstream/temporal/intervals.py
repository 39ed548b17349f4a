"""Valid-time intervals: half-open ``[start, end)`` in UTC, either end open.

A :class:`ValidInterval` says when something held in the world. ``None`` at an end means
open: no known start (it held since before anything we know) or no known end (it still
holds). The end is exclusive, so the year 2019 is ``[2019-01-01, 2020-01-01)`` and
consecutive periods meet without overlapping. An instant is the smallest interval that
contains it, one microsecond wide (:func:`at`); ``[t, t)`` is the empty interval.

Every time is zone-aware and kept in UTC; calendar periods (:func:`day`, :func:`month`,
:func:`quarter`, :func:`year`, :func:`week`) are UTC calendar periods. A period that would
end past the last representable instant (9999-12-31) is left open at its end.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from factstream.errors import IntervalInvalid

__all__ = [
    "ALWAYS",
    "RESOLUTION",
    "ValidInterval",
    "at",
    "day",
    "month",
    "quarter",
    "since",
    "until",
    "utc",
    "week",
    "year",
]

# The width of an instant: datetime's resolution.
RESOLUTION = timedelta(microseconds=1)
_MIN_YEAR, _MAX_YEAR = 1, 9999


def utc(t: datetime) -> datetime:
    """The same instant in UTC.

    Raises:
        IntervalInvalid: ``t`` has no zone (which zone it meant would be a guess).
    """
    if t.tzinfo is None or t.utcoffset() is None:
        raise IntervalInvalid(f"{t.isoformat()} has no time zone; valid time needs one")
    return t.astimezone(UTC)


@dataclass(frozen=True, slots=True)
class ValidInterval:
    """When something held: ``[start, end)`` in UTC; ``None`` is an open end.

    Raises:
        IntervalInvalid: an end has no zone, or ``start`` is after ``end``.
    """

    start: datetime | None = None
    end: datetime | None = None

    def __post_init__(self) -> None:
        start = None if self.start is None else utc(self.start)
        end = None if self.end is None else utc(self.end)
        if start is not None and end is not None and start > end:
            raise IntervalInvalid(
                f"interval starts at {_show(start)}, after it ends at {_show(end)}"
            )
        # Frozen: normalising to UTC has to go around the dataclass's own __setattr__.
        object.__setattr__(self, "start", start)
        object.__setattr__(self, "end", end)

    @property
    def is_empty(self) -> bool:
        """True for ``[t, t)``: it contains no instant."""
        return self.start is not None and self.start == self.end

    @property
    def is_point(self) -> bool:
        """True for an instant as :func:`at` makes it: one microsecond wide."""
        return (
            self.start is not None and self.end is not None and self.end - self.start == RESOLUTION
        )

    def contains(self, t: datetime) -> bool:
        """Whether the instant ``t`` lies in ``[start, end)``."""
        t = utc(t)
        return (self.start is None or self.start <= t) and (self.end is None or t < self.end)

    def overlaps(self, other: ValidInterval) -> bool:
        """Whether some instant lies in both intervals."""
        return self.intersect(other) is not None

    def intersect(self, other: ValidInterval) -> ValidInterval | None:
        """The instants in both intervals, or None when there are none."""
        start = _later_start(self.start, other.start)
        end = _earlier_end(self.end, other.end)
        if start is not None and end is not None and start >= end:
            return None
        return ValidInterval(start, end)

    def hull(self, other: ValidInterval) -> ValidInterval:
        """The smallest interval that covers both (and whatever lies between them)."""
        start = None if self.start is None or other.start is None else min(self.start, other.start)
        end = None if self.end is None or other.end is None else max(self.end, other.end)
        return ValidInterval(start, end)

    def describe(self) -> str:
        """The interval in words: '2019-01-01 to 2020-01-01', 'since ...', 'until ...', 'always'.

        Midnights show as dates, other instants as ISO times with a Z; the end is exclusive.
        """
        if self.start is None:
            return "always" if self.end is None else f"until {_show(self.end)}"
        if self.end is None:
            return f"since {_show(self.start)}"
        if self.is_point:
            return f"at {_show(self.start)}"
        if self.is_empty:
            return f"never (empty at {_show(self.start)})"
        return f"{_show(self.start)} to {_show(self.end)}"


ALWAYS = ValidInterval()


def at(t: datetime) -> ValidInterval:
    """The instant ``t``: the one-microsecond interval that contains it."""
    start = utc(t)
    return ValidInterval(start, _plus(start, RESOLUTION))


def since(t: datetime) -> ValidInterval:
    """From ``t`` on, with no known end."""
    return ValidInterval(t, None)


def until(t: datetime) -> ValidInterval:
    """Up to (not including) ``t``, with no known start."""
    return ValidInterval(None, t)


def day(d: date) -> ValidInterval:
    """The UTC calendar day ``d``."""
    start = _midnight(d)
    return ValidInterval(start, _plus(start, timedelta(days=1)))


def week(d: date) -> ValidInterval:
    """The ISO week (Monday to Sunday) that contains ``d``."""
    monday = _midnight(d) - timedelta(days=d.weekday())
    return ValidInterval(monday, _plus(monday, timedelta(days=7)))


def month(year: int, month: int) -> ValidInterval:
    """The UTC calendar month ``month`` (1-12) of ``year``.

    Raises:
        IntervalInvalid: the month or year is out of range.
    """
    if not 1 <= month <= 12:
        raise IntervalInvalid(f"month {month} is not between 1 and 12")
    return _months(year, month - 1, 1)


def quarter(year: int, quarter: int) -> ValidInterval:
    """The UTC calendar quarter ``quarter`` (1-4) of ``year``: Q1 is January to March.

    Raises:
        IntervalInvalid: the quarter or year is out of range.
    """
    if not 1 <= quarter <= 4:
        raise IntervalInvalid(f"quarter {quarter} is not between 1 and 4")
    return _months(year, 3 * (quarter - 1), 3)


def year(year: int) -> ValidInterval:
    """The UTC calendar year ``year``.

    Raises:
        IntervalInvalid: the year is out of range (1 to 9999).
    """
    return _months(year, 0, 12)


def _months(year: int, first: int, count: int) -> ValidInterval:
    # ``count`` months from month index ``first`` (0 = January) of ``year``.
    start = _month_start(year, first)
    if start is None:
        raise IntervalInvalid(f"year {year} is not between {_MIN_YEAR} and {_MAX_YEAR}")
    return ValidInterval(start, _month_start(year, first + count))


def _month_start(year: int, index: int) -> datetime | None:
    # The start of month ``index`` (0-based, may run past December) of ``year``, or None
    # past the representable range.
    year, index = year + index // 12, index % 12
    if not _MIN_YEAR <= year <= _MAX_YEAR:
        return None
    return datetime(year, index + 1, 1, tzinfo=UTC)


def _midnight(d: date) -> datetime:
    return datetime.combine(d, time(), tzinfo=UTC)


def _plus(t: datetime, delta: timedelta) -> datetime | None:
    # t + delta, or None (open) past the last representable instant.
    try:
        return t + delta
    except OverflowError:
        return None


def _later_start(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None:
        return b
    return a if b is None else max(a, b)


def _earlier_end(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None:
        return b
    return a if b is None else min(a, b)


def _show(t: datetime) -> str:
    if t.time() == time():
        return t.date().isoformat()
    spec = "seconds" if t.microsecond == 0 else "microseconds"
    return t.replace(tzinfo=None).isoformat(timespec=spec) + "Z"
