"""ValidInterval: half-open UTC intervals, their algebra, calendar periods and descriptions."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factstream.errors import BadInput, IntervalInvalid
from factstream.temporal.intervals import (
    ALWAYS,
    RESOLUTION,
    ValidInterval,
    at,
    day,
    month,
    quarter,
    since,
    until,
    week,
    year,
)

_TIMES = st.datetimes(
    min_value=datetime(1900, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
)
_ENDS = st.none() | _TIMES


@st.composite
def _intervals(draw: st.DrawFn) -> ValidInterval:
    start, end = draw(_ENDS), draw(_ENDS)
    if start is not None and end is not None and start > end:
        start, end = end, start
    return ValidInterval(start, end)


def _utc(y: int, m: int, d: int, h: int = 0, mi: int = 0, s: int = 0, us: int = 0) -> datetime:
    return datetime(y, m, d, h, mi, s, us, tzinfo=UTC)


def test_a_reversed_or_naive_interval_is_refused_as_bad_input() -> None:
    with pytest.raises(IntervalInvalid, match="starts at 2020-01-01, after it ends at 2019"):
        ValidInterval(_utc(2020, 1, 1), _utc(2019, 1, 1))
    with pytest.raises(BadInput, match="has no time zone"):
        ValidInterval(datetime(2020, 1, 1), None)
    with pytest.raises(IntervalInvalid, match="has no time zone"):
        ALWAYS.contains(datetime(2020, 1, 1))


def test_ends_are_kept_in_utc_so_equal_instants_make_equal_intervals() -> None:
    plus_two = timezone(timedelta(hours=2))
    interval = ValidInterval(datetime(2020, 1, 1, 2, tzinfo=plus_two), None)
    assert interval.start is not None and interval.start.tzinfo is UTC
    assert interval == since(_utc(2020, 1, 1))


def test_calendar_periods_are_half_open() -> None:
    assert year(2019) == ValidInterval(_utc(2019, 1, 1), _utc(2020, 1, 1))
    assert month(2019, 12) == ValidInterval(_utc(2019, 12, 1), _utc(2020, 1, 1))
    assert quarter(2018, 3) == ValidInterval(_utc(2018, 7, 1), _utc(2018, 10, 1))
    assert day(date(2020, 2, 29)) == ValidInterval(_utc(2020, 2, 29), _utc(2020, 3, 1))
    assert week(date(2024, 3, 6)) == ValidInterval(_utc(2024, 3, 4), _utc(2024, 3, 11))
    assert year(2019).contains(_utc(2019, 12, 31, 23, 59, 59))
    assert not year(2019).contains(_utc(2020, 1, 1))


def test_periods_at_the_end_of_time_stay_open_and_out_of_range_ones_are_refused() -> None:
    assert year(9999).end is None
    assert day(date.max).end is None
    for bad in (lambda: year(0), lambda: month(2019, 13), lambda: quarter(2019, 0)):
        with pytest.raises(IntervalInvalid):
            bad()


def test_describe_says_the_interval_in_words() -> None:
    assert year(2019).describe() == "2019-01-01 to 2020-01-01"
    assert since(_utc(2019, 3, 1)).describe() == "since 2019-03-01"
    assert until(_utc(2025, 1, 1)).describe() == "until 2025-01-01"
    assert ALWAYS.describe() == "always"
    assert at(_utc(2019, 3, 4, 12, 30)).describe() == "at 2019-03-04T12:30:00Z"
    assert at(_utc(2019, 3, 4, 0, 0, 0, 5)).describe() == "at 2019-03-04T00:00:00.000005Z"
    t = _utc(2019, 3, 4)
    assert ValidInterval(t, t).describe() == "never (empty at 2019-03-04)"


def test_a_point_contains_its_instant_only() -> None:
    t = _utc(2019, 3, 4, 12)
    assert at(t).is_point and at(t).contains(t)
    assert not at(t).contains(t + RESOLUTION) and not at(t).contains(t - RESOLUTION)
    assert not year(2019).is_point and not ALWAYS.is_point


def test_the_empty_interval_contains_and_overlaps_nothing() -> None:
    t = _utc(2019, 3, 4)
    empty = ValidInterval(t, t)
    assert empty.is_empty and not empty.contains(t)
    assert not empty.overlaps(ALWAYS) and empty.intersect(year(2019)) is None


def test_adjacent_periods_meet_without_overlapping() -> None:
    assert not year(2019).overlaps(year(2020))
    assert year(2019).intersect(year(2020)) is None
    assert year(2019).hull(year(2020)) == ValidInterval(_utc(2019, 1, 1), _utc(2021, 1, 1))


@settings(max_examples=60)
@given(_intervals(), _intervals())
def test_overlap_is_symmetric_and_agrees_with_intersect(a: ValidInterval, b: ValidInterval) -> None:
    assert a.overlaps(b) == b.overlaps(a)
    assert a.intersect(b) == b.intersect(a)
    assert a.overlaps(b) == (a.intersect(b) is not None)


@settings(max_examples=60)
@given(_intervals(), _intervals(), _TIMES)
def test_contains_agrees_with_intersect_and_hull(
    a: ValidInterval, b: ValidInterval, t: datetime
) -> None:
    both = a.intersect(b)
    assert (a.contains(t) and b.contains(t)) == (both is not None and both.contains(t))
    if a.contains(t) or b.contains(t):
        assert a.hull(b).contains(t)


@settings(max_examples=60)
@given(_intervals())
def test_always_is_the_identity_of_intersect_and_absorbs_hull(a: ValidInterval) -> None:
    assert a.intersect(ALWAYS) == (None if a.is_empty else a)
    assert a.hull(ALWAYS) == ALWAYS


@settings(max_examples=60)
@given(_TIMES)
def test_an_instant_lies_in_its_day_month_quarter_year_and_week(t: datetime) -> None:
    d = t.date()
    for period in (
        at(t),
        day(d),
        week(d),
        month(d.year, d.month),
        quarter(d.year, (d.month - 1) // 3 + 1),
        year(d.year),
    ):
        assert period.contains(t)
        assert period.start is not None and period.end is not None and period.start < period.end
