"""The time expressions of talk: weekends, seasons, parts of a day, short weekdays, and the
time a statement tells of (``told_time``), which a fact's valid time starts from."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factstream.temporal import resolve_fact_interval, told_time
from factstream.temporal.parse import TimeKind, parse_time

# A Saturday morning; MONDAY is two days later.
NOW = datetime(2024, 6, 15, 10, 30, tzinfo=UTC)
MONDAY = datetime(2024, 6, 17, 9, 0, tzinfo=UTC)

EXAMPLES: list[tuple[str, datetime, str]] = [
    ("We went hiking last weekend.", MONDAY, "2024-06-15 to 2024-06-17"),
    # On a Saturday: the weekend before.
    ("We went hiking last weekend.", NOW, "2024-06-08 to 2024-06-10"),
    ("this past weekend was wild", MONDAY, "2024-06-15 to 2024-06-17"),
    ("we went camping two weekends ago", MONDAY, "2024-06-08 to 2024-06-10"),
    ("I'm free this weekend", NOW, "2024-06-15 to 2024-06-17"),
    ("I'm free this weekend", MONDAY, "2024-06-22 to 2024-06-24"),
    ("I joined a group last Tues.", MONDAY, "2024-06-11 to 2024-06-12"),
    ("Last Fri I took the kids out", NOW, "2024-06-14 to 2024-06-15"),
    ("see you next Thurs", NOW, "2024-06-20 to 2024-06-21"),
    ("Last night was amazing", NOW, "2024-06-14 to 2024-06-15"),
    ("we cooked tonight", NOW, "2024-06-15 to 2024-06-16"),
    ("the day before yesterday I ran", NOW, "2024-06-13 to 2024-06-14"),
    ("a couple of weeks ago", NOW, "2024-05-27 to 2024-06-03"),
    ("a couple days ago", NOW, "2024-06-13 to 2024-06-14"),
    ("our trip last summer", NOW, "2023-06-01 to 2023-09-01"),  # this summer is under way
    ("our trip last summer", datetime(2024, 10, 2, tzinfo=UTC), "2024-06-01 to 2024-09-01"),
    ("plans for this summer", datetime(2024, 4, 2, tzinfo=UTC), "2024-06-01 to 2024-09-01"),
    ("skiing next winter", NOW, "2024-12-01 to 2025-03-01"),
    ("skiing this winter", datetime(2024, 1, 20, tzinfo=UTC), "2023-12-01 to 2024-03-01"),
    ("in the summer of 2022", NOW, "2022-06-01 to 2022-09-01"),
    # 'from' a time behind the speaker says where a thing comes from, not when it began.
    ("a pic from last Friday with friends", NOW, "2024-06-14 to 2024-06-15"),
    ("the photos from yesterday", NOW, "2024-06-14 to 2024-06-15"),
    ("a card from two weeks ago", NOW, "2024-05-27 to 2024-06-03"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("from 2019 she ran the firm", "2019-01-01"),  # a calendar time: where it began
        ("from yesterday on it rained", "2024-06-14"),
        ("from last Friday onwards we rested", "2024-06-14"),
        ("since last Friday", "2024-06-14"),
    ],
)
def test_from_or_since_a_time_with_on_after_it_starts_there(text: str, start: str) -> None:
    found = parse_time(text, NOW)
    assert found is not None, text
    assert (found.kind, found.interval.end) == (TimeKind.AFTER, None)
    assert found.interval.start is not None
    assert found.interval.start.date().isoformat() == start


@pytest.mark.parametrize(("text", "now", "described"), EXAMPLES)
def test_spoken_forms_resolve_against_when_they_were_said(
    text: str, now: datetime, described: str
) -> None:
    found = parse_time(text, now)
    assert found is not None, text
    assert (found.kind, found.interval.describe()) == (TimeKind.PERIOD, described)


@pytest.mark.parametrize(
    "text",
    [
        "The sun was out and we sat down.",  # short weekdays only after last / next
        "I had a bad fall on the ice.",  # a season only with last / this / next or a year
        "a weekend of fun",
        "a few days ago",  # no count to resolve
    ],
)
def test_words_that_are_not_times_are_left_alone(text: str) -> None:
    assert parse_time(text, NOW) is None


@given(
    now=st.datetimes(
        min_value=datetime(1900, 1, 1), max_value=datetime(2900, 1, 1), timezones=st.just(UTC)
    ),
    count=st.integers(1, 9),
)
@settings(max_examples=60, deadline=None)
def test_weekends_are_a_saturday_and_sunday_over_before_the_day_said(
    now: datetime, count: int
) -> None:
    found = parse_time(f"{count} weekends ago", now)
    assert found is not None
    start, end = found.interval.start, found.interval.end
    assert start is not None and end is not None
    assert start.weekday() == 5 and end - start == timedelta(days=2)
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    assert end <= today and today - end < timedelta(weeks=count)


def test_told_time_prefers_a_period_to_a_point() -> None:
    found = told_time("I'm currently reading the book I bought last week", NOW)
    assert found is not None and found.text == "last week"
    only_now = told_time("I'm currently reading it", NOW)
    assert only_now is not None and only_now.kind is TimeKind.POINT
    assert told_time("I love reading", NOW) is None


def test_a_fact_valid_time_starts_where_told_time_reads() -> None:
    text = "Melanie currently goes camping, as she did last weekend"
    reference = told_time(text, MONDAY)
    assert reference is not None
    assert resolve_fact_interval(text, MONDAY).start == reference.interval.start
