"""A fact's valid time from its text and event time, and the guard that refuses implausible ones."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factstream.errors import BadInput, IntervalImplausible, IntervalInvalid
from factstream.temporal.facts import (
    MAX_VALID_AFTER_EVENT,
    check_interval,
    resolve_fact_interval,
    resolve_time_expression,
    says_past,
)
from factstream.temporal.intervals import ValidInterval

EVENT = datetime(2024, 6, 15, 10, 30, tzinfo=UTC)


def _utc(y: int, m: int = 1, d: int = 1) -> datetime:
    return datetime(y, m, d, tzinfo=UTC)


@pytest.mark.parametrize(
    ("fact", "expected"),
    [
        ("Alice Smith is the CEO of Acme.", ValidInterval(EVENT, None)),
        ("Alice Smith was elected mayor of Springfield.", ValidInterval(EVENT, None)),
        ("Bob Jones is the former CEO of Acme.", ValidInterval(None, EVENT)),
        ("Bob Jones, ex-CEO of Acme, joined Initech.", ValidInterval(None, EVENT)),
        ("Bob Jones was the CEO of Acme.", ValidInterval(None, EVENT)),
        ("Bob Jones no longer chairs the board.", ValidInterval(None, EVENT)),
        ("Alice Smith has been CEO of Acme since 2019.", ValidInterval(_utc(2019), None)),
        ("Alice Smith has chaired the board since Monday.", ValidInterval(_utc(2024, 6, 10), None)),
        ("Bob Jones was CEO of Acme from 2001 to 2004.", ValidInterval(_utc(2001), _utc(2005))),
        ("The road is closed until 2025.", ValidInterval(EVENT, _utc(2025))),
        ("The mine was open until 2019.", ValidInterval(None, _utc(2019))),
        ("The mine is closed until 2019.", ValidInterval(None, _utc(2019))),
        ("Alice Smith became CEO in March 2019.", ValidInterval(_utc(2019, 3), None)),
        ("Bob Jones was CEO in 2019.", ValidInterval(_utc(2019), EVENT)),
        ("Bob Jones was CEO of Acme since 2019.", ValidInterval(_utc(2019), EVENT)),
        ("The tariff applies after 2015.", ValidInterval(_utc(2016), None)),
        ("Alice Smith is now CEO.", ValidInterval(EVENT, None)),
    ],
)
def test_a_fact_text_resolves_against_the_event_time(fact: str, expected: ValidInterval) -> None:
    assert resolve_fact_interval(fact, EVENT) == expected


def test_past_states_and_past_events_are_told_apart() -> None:
    assert says_past("the former mayor") and says_past("an ex-minister")
    assert says_past("She was the mayor") and says_past("They were partners")
    assert not says_past("She was elected mayor") and not says_past("He was born in Ohio")
    assert not says_past("Extra funds were taken from the budget")
    assert not says_past("The expo opens")


def test_check_interval_passes_a_plausible_interval_through() -> None:
    assert check_interval(_utc(2019), _utc(2025), EVENT) == ValidInterval(_utc(2019), _utc(2025))
    assert check_interval(None, None, EVENT) == ValidInterval()
    assert check_interval(_utc(1066), None, EVENT).start == _utc(1066)


def test_check_interval_refuses_reversed_empty_and_naive_intervals() -> None:
    with pytest.raises(IntervalInvalid, match="after it ends"):
        check_interval(_utc(2020), _utc(2019), EVENT)
    with pytest.raises(IntervalInvalid, match="empty"):
        check_interval(_utc(2020), _utc(2020), EVENT)
    with pytest.raises(IntervalInvalid, match="no time zone"):
        check_interval(None, None, datetime(2024, 6, 15))


def test_check_interval_refuses_times_far_beyond_the_event() -> None:
    limit = EVENT + MAX_VALID_AFTER_EVENT
    assert check_interval(None, limit, EVENT).end == limit
    with pytest.raises(IntervalImplausible, match="days after the document's event time") as err:
        check_interval(None, _utc(2040), EVENT)
    assert isinstance(err.value, BadInput) and err.value.when == _utc(2040)
    with pytest.raises(IntervalImplausible):
        check_interval(limit + timedelta(seconds=1), None, EVENT)
    far = resolve_fact_interval("The lease runs until 2100.", EVENT)
    with pytest.raises(IntervalImplausible):
        check_interval(far.start, far.end, EVENT)


def test_the_limit_near_the_end_of_time_does_not_overflow() -> None:
    end_of_time = datetime(9999, 12, 31, tzinfo=UTC)
    assert check_interval(end_of_time, None, end_of_time).start == end_of_time


_EVENTS = st.datetimes(
    min_value=datetime(1100, 1, 1), max_value=datetime(2900, 1, 1), timezones=st.just(UTC)
)
_PHRASES = st.sampled_from(
    ["", "since 2019", "until 2025", "from 2001 to 2004", "in 2019", "before March 2020",
     "after 2015", "since Monday", "yesterday", "two years ago", "now", "last year"]
)  # fmt: skip
_OPEN_ENDED = {"since 2019", "in 2019", "after 2015", "since Monday", "yesterday", "two years ago",
               "now", "last year"}  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(_EVENTS, _PHRASES, st.sampled_from(["is", "was", "is the former"]))
def test_every_fact_interval_is_well_formed(event: datetime, phrase: str, verb: str) -> None:
    interval = resolve_fact_interval(f"Alice Smith {verb} CEO of Acme {phrase}.", event)
    assert not interval.is_empty
    if not phrase:
        past = verb != "is"
        assert interval == (ValidInterval(None, event) if past else ValidInterval(event, None))
    if verb != "is" and phrase in _OPEN_ENDED:
        # A past state closes an open end at the event time, unless it only starts after it.
        starts_before = interval.start is None or interval.start < event
        assert interval.end == (event if starts_before else None)


@pytest.mark.parametrize(
    ("expression", "fact", "expected"),
    [
        ("from 2001 to 2004", "Parker was CEO of Acme.", ValidInterval(_utc(2001), _utc(2005))),
        ("since 2019", "Parker is CEO of Acme.", ValidInterval(_utc(2019), None)),
        # A past state closes at the event time, as in resolve_fact_interval.
        ("since 2019", "Parker was CEO of Acme.", ValidInterval(_utc(2019), EVENT)),
        # The expression counts, not the first time the text names.
        ("in 2020", "Parker, hired in 1999, became CEO in 2020.", ValidInterval(_utc(2020), None)),
    ],
)
def test_a_time_expression_given_apart_from_the_fact(
    expression: str, fact: str, expected: ValidInterval
) -> None:
    assert resolve_time_expression(expression, fact, EVENT) == expected


def test_an_expression_the_parser_cannot_read_gives_none() -> None:
    assert resolve_time_expression("when the war ended", "Parker was CEO.", EVENT) is None
