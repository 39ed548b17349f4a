"""parse_time: each form in examples, and hypothesis round trips for dates and relative times."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factstream.errors import IntervalInvalid
from factstream.temporal.intervals import ValidInterval, at, day, month, quarter, week, year
from factstream.temporal.parse import TimeKind, find_times, parse_time, strip_time

# A Saturday morning.
NOW = datetime(2024, 6, 15, 10, 30, tzinfo=UTC)
_MONTH_NAMES = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)  # fmt: skip
_WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_NUMBER_WORDS = (
    "one", "two", "three", "four", "five", "six",
    "seven", "eight", "nine", "ten", "eleven", "twelve",
)  # fmt: skip
# Up to NOW, which it includes.
_TO_NOW = "to 2024-06-15T10:30:00.000001Z"
_SETTINGS = settings(max_examples=40, deadline=None)


def _utc(y: int, m: int = 1, d: int = 1, h: int = 0, mi: int = 0) -> datetime:
    return datetime(y, m, d, h, mi, tzinfo=UTC)


EXAMPLES: list[tuple[str, TimeKind, str]] = [
    ("What happened on 2019-03-04?", TimeKind.PERIOD, "2019-03-04 to 2019-03-05"),
    ("What did the board decide March 4, 2019?", TimeKind.PERIOD, "2019-03-04 to 2019-03-05"),
    ("What did the board decide on 4 March 2019?", TimeKind.PERIOD, "2019-03-04 to 2019-03-05"),
    ("Who spoke on the 4th of Sept. 2019?", TimeKind.PERIOD, "2019-09-04 to 2019-09-05"),
    ("Who was mayor in 2019?", TimeKind.PERIOD, "2019-01-01 to 2020-01-01"),
    ("Who was mayor in the year 2019?", TimeKind.PERIOD, "2019-01-01 to 2020-01-01"),
    ("Who was mayor in March 2019?", TimeKind.PERIOD, "2019-03-01 to 2019-04-01"),
    ("Revenue in Q3 2018?", TimeKind.PERIOD, "2018-07-01 to 2018-10-01"),
    ("Revenue in the third quarter of 2018?", TimeKind.PERIOD, "2018-07-01 to 2018-10-01"),
    ("Revenue for 2018 Q4?", TimeKind.PERIOD, "2018-10-01 to 2019-01-01"),
    ("Which bands formed in the 1990s?", TimeKind.PERIOD, "1990-01-01 to 2000-01-01"),
    ("Who won last year?", TimeKind.PERIOD, "2023-01-01 to 2024-01-01"),
    ("Who wins this year?", TimeKind.PERIOD, "2024-01-01 to 2025-01-01"),
    ("Who hosts next year?", TimeKind.PERIOD, "2025-01-01 to 2026-01-01"),
    ("What closed last month?", TimeKind.PERIOD, "2024-05-01 to 2024-06-01"),
    ("What closed last week?", TimeKind.PERIOD, "2024-06-03 to 2024-06-10"),
    ("Sales this quarter?", TimeKind.PERIOD, "2024-04-01 to 2024-07-01"),
    ("What opened last March?", TimeKind.PERIOD, "2024-03-01 to 2024-04-01"),
    ("What opened last June?", TimeKind.PERIOD, "2023-06-01 to 2023-07-01"),
    ("What opened in June?", TimeKind.PERIOD, "2024-06-01 to 2024-07-01"),
    ("Who led two years ago?", TimeKind.PERIOD, "2022-01-01 to 2023-01-01"),
    ("Who led 3 months ago?", TimeKind.PERIOD, "2024-03-01 to 2024-04-01"),
    ("Who led a year ago?", TimeKind.PERIOD, "2023-01-01 to 2024-01-01"),
    ("Who led five days ago?", TimeKind.PERIOD, "2024-06-10 to 2024-06-11"),
    ("Who joined in the past year?", TimeKind.PERIOD, f"2023-06-15T10:30:00Z {_TO_NOW}"),
    ("Who joined over the last 3 months?", TimeKind.PERIOD, f"2024-03-15T10:30:00Z {_TO_NOW}"),
    ("What happened yesterday?", TimeKind.PERIOD, "2024-06-14 to 2024-06-15"),
    ("What happens today?", TimeKind.PERIOD, "2024-06-15 to 2024-06-16"),
    ("What happened on Monday?", TimeKind.PERIOD, "2024-06-10 to 2024-06-11"),
    ("What happened last Saturday?", TimeKind.PERIOD, "2024-06-08 to 2024-06-09"),
    ("What happens next Monday?", TimeKind.PERIOD, "2024-06-17 to 2024-06-18"),
    ("Who is the CEO now?", TimeKind.POINT, "at 2024-06-15T10:30:00Z"),
    ("Who currently leads the party?", TimeKind.POINT, "at 2024-06-15T10:30:00Z"),
    ("Who leads at the moment?", TimeKind.POINT, "at 2024-06-15T10:30:00Z"),
    ("Who was CEO before 2020?", TimeKind.BEFORE, "until 2020-01-01"),
    ("Who was CEO until 2025?", TimeKind.BEFORE, "until 2025-01-01"),
    ("Who was CEO through 2019?", TimeKind.BEFORE, "until 2020-01-01"),
    ("Who was CEO after 2015?", TimeKind.AFTER, "since 2016-01-01"),
    ("Who has been CEO since 2019?", TimeKind.AFTER, "since 2019-01-01"),
    ("What changed since Monday?", TimeKind.AFTER, "since 2024-06-10"),
    ("What changed since May?", TimeKind.AFTER, "since 2024-05-01"),
    ("Who ruled between 2015 and 2018?", TimeKind.BETWEEN, "2015-01-01 to 2019-01-01"),
    ("Who ruled between 2018 and 2015?", TimeKind.BETWEEN, "2015-01-01 to 2019-01-01"),
    ("Who ruled from 2001 to 2004?", TimeKind.BETWEEN, "2001-01-01 to 2005-01-01"),
    ("Who ruled during 2019-2020?", TimeKind.BETWEEN, "2019-01-01 to 2021-01-01"),
    ("Who ruled from March 2019 until now?", TimeKind.BETWEEN, f"2019-03-01 {_TO_NOW}"),
]  # fmt: skip


@pytest.mark.parametrize(("question", "kind", "described"), EXAMPLES)
def test_each_form_resolves_against_now(question: str, kind: TimeKind, described: str) -> None:
    found = parse_time(question, NOW)
    assert found is not None, question
    assert (found.kind, found.interval.describe()) == (kind, described)
    assert question[found.span[0] : found.span[1]] == found.text


@pytest.mark.parametrize(
    "question",
    [
        "When X was CEO, who was the chairman?",
        "What did the company say before the merger?",
        "What was the 2019 budget?",  # a bare year needs a preposition or a connective
        "How many of the 2000 employees left?",
        "It may be that the march was cancelled.",
        "What happened on February 30, 2019?",  # no such day, and not read as its parts
        "Who was mayor 9000 years ago?",
        "",
    ],
)
def test_no_time_or_one_left_to_the_lm_gives_none(question: str) -> None:
    assert parse_time(question, NOW) is None


def test_the_answer_can_say_which_interval_it_used_and_strip_it() -> None:
    found = parse_time("Who was mayor of Springfield in 2019?", NOW)
    assert found is not None
    assert found.describe() == '"in 2019" = 2019-01-01 to 2020-01-01'
    stripped = strip_time("Who was mayor of Springfield in 2019?", found)
    assert stripped == "Who was mayor of Springfield?"


def test_find_times_returns_each_expression_in_order() -> None:
    found = find_times("Who led in 2019 and who leads now?", NOW)
    assert [(f.text, f.kind) for f in found] == [("in 2019", "period"), ("now", "point")]


def test_now_is_read_in_utc_and_must_have_a_zone() -> None:
    east = datetime(2024, 6, 16, 1, 0, tzinfo=timezone(timedelta(hours=5)))  # 2024-06-15 UTC
    found = parse_time("today", east)
    assert found is not None and found.interval == day(date(2024, 6, 15))
    with pytest.raises(IntervalInvalid, match="no time zone"):
        parse_time("today", datetime(2024, 6, 15))


# Round trips: a rendered phrase parses back to exactly the interval it was rendered from.

_DATES = st.dates(min_value=date(1000, 1, 1), max_value=date(2999, 12, 31))
_YEARS = st.integers(1000, 2999)
_NOWS = st.datetimes(
    min_value=datetime(1100, 1, 1), max_value=datetime(2900, 1, 1), timezones=st.just(UTC)
)
_LEADS = st.sampled_from(["", "Who was mayor ", "What did the council decide ", "Tell me, "])
_TAILS = st.sampled_from(["", "?", " in Springfield?", ", please."])


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _date_phrases(d: date) -> list[str]:
    name = _MONTH_NAMES[d.month - 1]
    return [
        d.isoformat(),
        f"{name} {d.day}, {d.year}",
        f"{name[:3]} {d.day} {d.year}",
        f"{d.day} {name} {d.year}",
        f"the {_ordinal(d.day)} of {name}, {d.year}",
    ]


def _count(n: int, unit: str, words: bool) -> str:
    number = _NUMBER_WORDS[n - 1] if words and n <= 12 else str(n)
    return f"{number} {unit}{'s' if n > 1 else ''}"


def _check_round_trip(lead: str, phrase: str, tail: str, now: datetime) -> ValidInterval:
    text = f"{lead}{phrase}{tail}"
    found = parse_time(text, now)
    assert found is not None, text
    assert phrase in found.text and text[found.span[0] : found.span[1]] == found.text
    return found.interval


@_SETTINGS
@given(_DATES, st.integers(0, 4), _LEADS, _TAILS)
def test_a_rendered_date_parses_back_to_its_day(d: date, form: int, lead: str, tail: str) -> None:
    assert _check_round_trip(lead, _date_phrases(d)[form], tail, NOW) == day(d)


@_SETTINGS
@given(_YEARS, st.integers(1, 12), st.integers(1, 4), _LEADS, _TAILS)
def test_rendered_years_months_and_quarters_parse_back(
    y: int, m: int, q: int, lead: str, tail: str
) -> None:
    assert _check_round_trip(lead, f"in {y}", tail, NOW) == year(y)
    assert _check_round_trip(lead, f"in {_MONTH_NAMES[m - 1]} {y}", tail, NOW) == month(y, m)
    ordinal = ["first", "second", "third", "fourth"][q - 1]
    for phrase in (f"in Q{q} {y}", f"in the {ordinal} quarter of {y}", f"in {y} Q{q}"):
        assert _check_round_trip(lead, phrase, tail, NOW) == quarter(y, q)


@_SETTINGS
@given(_YEARS, _YEARS, _LEADS, _TAILS)
def test_bounded_and_between_years_parse_back(a: int, b: int, lead: str, tail: str) -> None:
    assert _check_round_trip(lead, f"before {a}", tail, NOW) == ValidInterval(None, _utc(a))
    assert _check_round_trip(lead, f"until {a}", tail, NOW) == ValidInterval(None, _utc(a))
    assert _check_round_trip(lead, f"since {a}", tail, NOW) == ValidInterval(_utc(a), None)
    assert _check_round_trip(lead, f"after {a}", tail, NOW) == ValidInterval(_utc(a + 1), None)
    both = ValidInterval(_utc(min(a, b)), _utc(max(a, b) + 1))
    assert _check_round_trip(lead, f"between {a} and {b}", tail, NOW) == both
    assert _check_round_trip(lead, f"from {a} to {b}", tail, NOW) == both


@_SETTINGS
@given(_NOWS, st.integers(1, 40), st.booleans())
def test_years_and_months_ago_land_relative_to_any_now(now: datetime, n: int, words: bool) -> None:
    assert _check_round_trip("", f"{_count(n, 'year', words)} ago", "", now) == year(now.year - n)
    shifted = (now.year * 12 + now.month - 1) - n
    expected = month(shifted // 12, shifted % 12 + 1)
    assert _check_round_trip("", f"{_count(n, 'month', words)} ago", "", now) == expected
    today = now.date()
    assert _check_round_trip("", f"{_count(n, 'day', words)} ago", "", now) == day(
        today - timedelta(days=n)
    )
    assert _check_round_trip("", f"{_count(n, 'week', words)} ago", "", now) == week(
        today - timedelta(weeks=n)
    )


@_SETTINGS
@given(_NOWS)
def test_calendar_words_land_relative_to_any_now(now: datetime) -> None:
    today = now.date()
    expected = {
        "last year": year(now.year - 1),
        "this year": year(now.year),
        "next year": year(now.year + 1),
        "this month": month(now.year, now.month),
        "yesterday": day(today - timedelta(days=1)),
        "today": day(today),
        "tomorrow": day(today + timedelta(days=1)),
        "this week": week(today),
        "now": at(now),
        "currently": at(now),
    }
    for phrase, interval in expected.items():
        assert _check_round_trip("What happened ", phrase, "?", now) == interval
    last_month = _check_round_trip("", "last month", "", now)
    assert last_month.end == month(now.year, now.month).start
    assert last_month.start is not None and last_month.start.day == 1


@_SETTINGS
@given(_NOWS, st.integers(0, 6), st.integers(1, 12))
def test_weekdays_and_named_months_land_before_now(now: datetime, wd: int, m: int) -> None:
    since = _check_round_trip("", f"since {_WEEKDAY_NAMES[wd]}", "", now)
    assert since.start is not None and since.end is None
    assert since.start.weekday() == wd
    assert 1 <= (now.date() - since.start.date()).days <= 7
    last = _check_round_trip("", f"last {_MONTH_NAMES[m - 1]}", "", now)
    assert last.start is not None and last.start.month == m
    this_month = month(now.year, now.month)
    assert this_month.start is not None and last.start < this_month.start
    assert (this_month.start.year - last.start.year) * 12 + this_month.start.month - m <= 12


_PLAIN_WORDS = st.sampled_from(
    [
        "who", "was", "the", "mayor", "of", "Springfield", "what", "did", "company", "say",
        "about", "profits", "and", "is", "chief", "executive", "board", "chairman", "river",
        "city", "council", "vote", "42", "7", "many", "people", "in", "since", "between",
    ]
)  # fmt: skip


@_SETTINGS
@given(st.lists(_PLAIN_WORDS, max_size=12), _NOWS)
def test_text_without_time_expressions_gives_none(words: list[str], now: datetime) -> None:
    assert parse_time(" ".join(words) + "?", now) is None


@_SETTINGS
@given(st.text(max_size=80), _NOWS)
def test_any_text_gives_well_formed_references(text: str, now: datetime) -> None:
    found = find_times(text, now)
    last_end = 0
    for reference in found:
        start, end = reference.span
        assert last_end <= start < end <= len(text)
        assert text[start:end] == reference.text
        interval = reference.interval
        assert interval.start is None or interval.end is None or interval.start <= interval.end
        last_end = end
