"""Time anchors: the single time expressions in a text, each resolved to the interval it names.

An anchor is one expression that names a time on its own: a date, a month, a quarter, a
year, a weekday, a weekend, a season, 'last year', 'two years ago', 'yesterday', 'last
night', 'now'. :mod:`parse` joins
anchors with their connectives ('since', 'between ... and ...'). Every rule matches an
optional leading preposition ('in', 'during', 'as of', ...), so that the matched span can be
cut from a question whole.

A bare year, month name or weekday ('2019', 'May', 'Monday') is *weak*: numbers and words
like these are often not times ('2000 employees', 'may be'), so it counts only after a
preposition ('in 2019') or a connective ('since 2019', 'between 2015 and 2018').

Relative expressions resolve against ``now`` in UTC: see each resolver for its reading.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from factstream.errors import IntervalInvalid
from factstream.temporal import intervals
from factstream.temporal.intervals import RESOLUTION, ValidInterval

__all__ = ["Anchor", "find_anchors"]

Resolver = Callable[[re.Match[str], datetime], ValidInterval]

_FLAGS = re.IGNORECASE | re.ASCII

# English names, spelled out: calendar.month_name follows the process's locale.
_MONTH_NAMES = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
_MONTHS = {
    **{name: number for number, name in enumerate(_MONTH_NAMES, 1)},
    **{name[:3]: number for number, name in enumerate(_MONTH_NAMES, 1)},
    "sept": 9,
}
_WEEKDAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAYS = {name: number for number, name in enumerate(_WEEKDAY_NAMES)}
# Abbreviations count only after 'last', 'next' or 'this past' ('last Fri', 'next Tues'):
# alone, 'sun', 'sat' and 'wed' are words.
_WEEKDAY_SHORT = {
    "mon": 0, "tue": 1, "tues": 1, "wed": 2, "weds": 2, "thu": 3, "thur": 3, "thurs": 3,
    "fri": 4, "sat": 5, "sun": 6,
}  # fmt: skip
_WEEKDAY_ANY = {**_WEEKDAYS, **_WEEKDAY_SHORT}
# Meteorological seasons of the northern hemisphere: the first of their three months.
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4,
}  # fmt: skip


def _alternation(words: Iterable[str]) -> str:
    # Longest first, so that 'march' is tried before 'mar'.
    return "|".join(sorted(words, key=len, reverse=True))


_PREP = r"(?P<prep>\b(?:as\s+of|in|during|throughout|within|over|on|of|for)\s+)?"
_YEAR = r"(?<![\w.,$#])(?P<year>[12][0-9]{3})(?![\w%]|[.,][0-9])"
_MONTH = rf"\b(?P<month>{_alternation(_MONTHS)})\b\.?"
_DAY = r"\b(?P<day>[0-3]?[0-9])(?:st|nd|rd|th)?\b"
_WEEKDAY = rf"\b(?P<weekday>{_alternation(_WEEKDAYS)})\b"
_WEEKDAY_OR_SHORT = rf"\b(?P<weekday>{_alternation(_WEEKDAY_ANY)})\b\.?"
_SEASON = rf"\b(?P<season>{_alternation(_SEASONS)})\b"
_NUMBER = rf"(?:[0-9]{{1,4}}|a\s+couple(?:\s+of)?|{_alternation(_NUMBERS)})"
_COUNT = rf"(?P<n>{_NUMBER})"
_UNIT = r"(?P<unit>day|week|month|year|decade)s?\b"


@dataclass(frozen=True, slots=True)
class Anchor:
    """One time expression at ``text[start:end]`` and the interval it names.

    ``weak``: a bare year, month or weekday, which is a time only after a connective.
    """

    start: int
    end: int
    interval: ValidInterval
    weak: bool


@dataclass(frozen=True, slots=True)
class _Rule:
    pattern: re.Pattern[str]
    resolve: Resolver
    bare: bool  # weak unless a preposition leads it


def find_anchors(text: str, now: datetime) -> list[Anchor]:
    """Every anchor in ``text``, left to right, none overlapping; the leftmost, then longest wins.

    An expression that names no representable time (February 30, 9000 years ago) is skipped
    whole: 'February 30, 2019' is not read as 'February' or '2019'.
    """
    candidates = [found for rule in _RULES for found in _matches(rule, text, now)]
    candidates.sort(key=lambda found: (found[0], found[0] - found[1]))
    chosen: list[tuple[int, int, Anchor | None]] = []
    for found in candidates:
        if not chosen or found[0] >= chosen[-1][1]:
            chosen.append(found)
    return [anchor for _, _, anchor in chosen if anchor is not None]


def _matches(rule: _Rule, text: str, now: datetime) -> Iterator[tuple[int, int, Anchor | None]]:
    # (start, end, anchor) per match; the anchor is None where the match names no time.
    for match in rule.pattern.finditer(text):
        start, end = match.span()
        try:
            interval = rule.resolve(match, now)
        except (IntervalInvalid, ValueError, OverflowError):
            yield start, end, None
            continue
        weak = rule.bare and match.group("prep") is None
        yield start, end, Anchor(start, end, interval, weak)


def _today(now: datetime) -> date:
    return now.date()


def _count(match: re.Match[str]) -> int:
    word = " ".join(match.group("n").lower().split())
    if word.startswith("a couple"):
        return 2
    return _NUMBERS[word] if word in _NUMBERS else int(word)


def _month_number(match: re.Match[str]) -> int:
    return _MONTHS[match.group("month").lower()]


def _shift_months(t: datetime, months: int) -> datetime:
    # The same day and time ``months`` later (earlier if negative), the day clamped to the
    # month's length (March 31 minus a month is February 28 or 29).
    y, m = divmod(t.year * 12 + t.month - 1 + months, 12)
    return t.replace(year=y, month=m + 1, day=min(t.day, calendar.monthrange(y, m + 1)[1]))


def _month_of(t: datetime) -> ValidInterval:
    return intervals.month(t.year, t.month)


def _iso_date(match: re.Match[str], now: datetime) -> ValidInterval:
    """2019-03-04: that day."""
    return intervals.day(date(int(match["year"]), int(match["month"]), int(match["day"])))


def _written_date(match: re.Match[str], now: datetime) -> ValidInterval:
    """March 4, 2019 / 4 March 2019 / the 4th of March 2019: that day."""
    return intervals.day(date(int(match["year"]), _month_number(match), int(match["day"])))


def _month_year(match: re.Match[str], now: datetime) -> ValidInterval:
    """March 2019: that month."""
    return intervals.month(int(match["year"]), _month_number(match))


def _quarter(match: re.Match[str], now: datetime) -> ValidInterval:
    """Q3 2018 / the third quarter of 2018 / 2018 Q3: that quarter (Q1 is January-March)."""
    word = match.groupdict().get("qword")
    number = _ORDINALS[word.lower()] if word else int(match["q"])
    return intervals.quarter(int(match["year"]), number)


def _year(match: re.Match[str], now: datetime) -> ValidInterval:
    """2019: that calendar year."""
    return intervals.year(int(match["year"]))


def _decade(match: re.Match[str], now: datetime) -> ValidInterval:
    """the 1990s: 1990 to 1999."""
    first = int(match["decade"])
    return intervals.year(first).hull(intervals.year(first + 9))


def _bare_month(match: re.Match[str], now: datetime) -> ValidInterval:
    """March (no year): the most recent March, this month included."""
    number = _month_number(match)
    return intervals.month(now.year if number <= now.month else now.year - 1, number)


def _near_month(match: re.Match[str], now: datetime) -> ValidInterval:
    """last March: the latest March before this month; next March: the first after it."""
    number = _month_number(match)
    if match["rel"].lower() == "last":
        return intervals.month(now.year if number < now.month else now.year - 1, number)
    return intervals.month(now.year if number > now.month else now.year + 1, number)


def _weekday_before(now: datetime, weekday: int) -> date:
    # The latest such weekday before today (a week ago when today is that weekday).
    today = _today(now)
    return today - timedelta(days=(today.weekday() - weekday - 1) % 7 + 1)


def _bare_weekday(match: re.Match[str], now: datetime) -> ValidInterval:
    """Monday / last Monday / last Mon / this past Monday: the latest Monday before today."""
    return intervals.day(_weekday_before(now, _WEEKDAY_ANY[match["weekday"].lower()]))


def _next_weekday(match: re.Match[str], now: datetime) -> ValidInterval:
    """next Monday / next Mon: the first Monday after today."""
    today = _today(now)
    weekday = _WEEKDAY_ANY[match["weekday"].lower()]
    return intervals.day(today + timedelta(days=(weekday - today.weekday() - 1) % 7 + 1))


def _calendar_relative(match: re.Match[str], now: datetime) -> ValidInterval:
    """last/this/next year, quarter, month, week: the calendar period before, at or after now."""
    step = {"last": -1, "previous": -1, "this": 0, "next": 1, "coming": 1}[match["rel"].lower()]
    unit = match["unit"].lower()
    if unit == "week":
        return intervals.week(_today(now) + timedelta(weeks=step))
    if unit == "quarter":
        return _quarter_index(now.year * 4 + (now.month - 1) // 3 + step)
    months = {"month": 1, "year": 12}[unit]
    shifted = _shift_months(now, step * months)
    return _month_of(shifted) if unit == "month" else intervals.year(shifted.year)


def _quarter_index(index: int) -> ValidInterval:
    y, q = divmod(index, 4)
    return intervals.quarter(y, q + 1)


def _ago(match: re.Match[str], now: datetime) -> ValidInterval:
    """two years ago / 3 months ago / a week ago: the calendar period of that unit holding then.

    A decade counts as ten years and resolves to a year, like 'ten years ago'.
    """
    count, unit = _count(match), match["unit"].lower()
    if unit in ("day", "week"):
        then = _today(now) - timedelta(days=count * (7 if unit == "week" else 1))
        return intervals.day(then) if unit == "day" else intervals.week(then)
    months = count * {"month": 1, "year": 12, "decade": 120}[unit]
    shifted = _shift_months(now, -months)
    return _month_of(shifted) if unit == "month" else intervals.year(shifted.year)


def _trailing(match: re.Match[str], now: datetime) -> ValidInterval:
    """the past year / the last 3 months / past two weeks: from that long ago up to now."""
    count = _count(match) if match["n"] else 1
    unit = match["unit"].lower()
    if unit in ("day", "week"):
        start = now - timedelta(days=count * (7 if unit == "week" else 1))
    else:
        start = _shift_months(now, -count * {"month": 1, "year": 12, "decade": 120}[unit])
    return ValidInterval(start, now + RESOLUTION)


def _day_word(match: re.Match[str], now: datetime) -> ValidInterval:
    """yesterday / today / tomorrow: that UTC day."""
    offset = {"yesterday": -1, "today": 0, "tomorrow": 1}[match["word"].lower()]
    return intervals.day(_today(now) + timedelta(days=offset))


def _day_part(match: re.Match[str], now: datetime) -> ValidInterval:
    """last night: yesterday; tonight, this morning (afternoon, evening): today;
    the day before yesterday: two days ago."""
    words = " ".join(match["part"].lower().split())
    offset = {"last night": -1, "the day before yesterday": -2}.get(words, 0)
    return intervals.day(_today(now) + timedelta(days=offset))


def _weekend_of(saturday: date) -> ValidInterval:
    return intervals.day(saturday).hull(intervals.day(saturday + timedelta(days=1)))


def _last_saturday_weekend(now: datetime) -> date:
    # The Saturday of the latest weekend over before today began (on a weekend day: the one
    # before it).
    today = _today(now)
    return today - timedelta(days=today.weekday() + 2)


def _past_weekend(match: re.Match[str], now: datetime) -> ValidInterval:
    """last weekend / this past weekend / two weekends ago: Saturday and Sunday of the
    latest weekend over before today (said on a weekend day: the one before), or N-1
    weeks before it."""
    count = _count(match) if match.groupdict().get("n") else 1
    return _weekend_of(_last_saturday_weekend(now) - timedelta(weeks=count - 1))


def _coming_weekend(match: re.Match[str], now: datetime) -> ValidInterval:
    """this weekend: the weekend under way, else the next; next weekend: the first weekend
    that starts after today."""
    today = _today(now)
    if match["rel"].lower() == "this" and today.weekday() >= 5:
        return _weekend_of(today - timedelta(days=today.weekday() - 5))
    return _weekend_of(today + timedelta(days=(5 - today.weekday() - 1) % 7 + 1))


def _season_of(year: int, first_month: int) -> ValidInterval:
    # Three months from ``first_month`` of ``year`` (winter runs into the next year).
    start = intervals.month(year, first_month)
    end_year, end_index = divmod(year * 12 + first_month - 1 + 2, 12)
    return start.hull(intervals.month(end_year, end_index + 1))


def _season_year(match: re.Match[str], now: datetime) -> ValidInterval:
    """summer 2022 / the summer of 2022: its three months (winter 2022: December 2022 to
    February 2023)."""
    return _season_of(int(match["year"]), _SEASONS[match["season"].lower()])


def _near_season(match: re.Match[str], now: datetime) -> ValidInterval:
    """last summer: the latest summer over before today; this summer: the one under way,
    else the next to begin; next summer: the first to begin after today."""
    first = _SEASONS[match["season"].lower()]
    rel, today = match["rel"].lower(), _midnight(_today(now))
    candidates = [_season_of(now.year + shift, first) for shift in (-2, -1, 0, 1)]
    if rel == "last":
        return [s for s in candidates if s.end is not None and s.end <= today][-1]
    if rel == "this" and (under_way := [s for s in candidates if s.contains(today)]):
        return under_way[0]
    return next(s for s in candidates if s.start is not None and s.start > today)


def _midnight(d: date) -> datetime:
    start = intervals.day(d).start
    assert start is not None  # noqa: S101 - a day always starts
    return start


def _now(match: re.Match[str], now: datetime) -> ValidInterval:
    """now / currently / at present: the instant ``now``."""
    return intervals.at(now)


def _rule(core: str, resolve: Resolver, *, bare: bool = False) -> _Rule:
    return _Rule(re.compile(_PREP + core, _FLAGS), resolve, bare)


_RULES = (
    _rule(
        r"(?<![\w-])(?P<year>[0-9]{4})-(?P<month>[0-9]{2})-(?P<day>[0-9]{2})(?![\w-])", _iso_date
    ),
    _rule(rf"{_MONTH}\s+{_DAY},?\s+{_YEAR}", _written_date),
    _rule(rf"(?:the\s+)?{_DAY}(?:\s+of)?\s+{_MONTH},?\s+{_YEAR}", _written_date),
    _rule(rf"{_MONTH},?\s+(?:of\s+)?{_YEAR}", _month_year),
    _rule(
        r"(?:the\s+)?(?:\bQ(?P<q>[1-4])|\b(?P<qword>first|second|third|fourth|1st|2nd|3rd|4th)"
        rf"\s+quarter)(?:\s+of|,)?\s+{_YEAR}",
        _quarter,
    ),
    _rule(rf"{_YEAR}\s+Q(?P<q>[1-4])\b", _quarter),
    _rule(rf"(?:the\s+year\s+)?{_YEAR}", _year, bare=True),
    _rule(r"(?:the\s+)?\b(?P<decade>[12][0-9]{2}0)'?s\b", _decade),
    _rule(_MONTH, _bare_month, bare=True),
    _rule(rf"\b(?P<rel>last|next)\s+{_MONTH}", _near_month),
    _rule(_WEEKDAY, _bare_weekday, bare=True),
    _rule(rf"\b(?:last|this\s+past)\s+{_WEEKDAY_OR_SHORT}", _bare_weekday),
    _rule(rf"\bnext\s+{_WEEKDAY_OR_SHORT}", _next_weekday),
    _rule(
        rf"\b(?:(?:last|this\s+past|the\s+past|past)\s+weekend|{_COUNT}\s+weekends?\s+ago)\b",
        _past_weekend,
    ),
    _rule(r"\b(?P<rel>this|next|coming)\s+weekend\b", _coming_weekend),
    _rule(rf"(?:the\s+)?{_SEASON}\s+(?:of\s+)?{_YEAR}", _season_year),
    _rule(rf"\b(?P<rel>last|this|next)\s+{_SEASON}", _near_season),
    _rule(
        r"\b(?P<rel>last|previous|this|next|coming)\s+(?P<unit>year|quarter|month|week)\b",
        _calendar_relative,
    ),
    _rule(rf"\b{_COUNT}\s+{_UNIT}\s+ago\b", _ago),
    # 'the past year', 'the last 3 months', 'past two weeks'; without 'the' a count is needed,
    # since 'last year' alone is the calendar year before this one.
    _rule(
        rf"\b(?:the\s+|(?=(?:past|last)\s+{_NUMBER}\s))(?:past|last)\s+(?:{_COUNT}\s+)?{_UNIT}",
        _trailing,
    ),
    _rule(r"\b(?P<word>yesterday|today|tomorrow)\b", _day_word),
    _rule(
        r"\b(?P<part>last\s+night|tonight|this\s+(?:morning|afternoon|evening)"
        r"|the\s+day\s+before\s+yesterday)\b",
        _day_part,
    ),
    _rule(
        r"\b(?:right\s+now|now|currently|at\s+present|at\s+the\s+moment|presently|nowadays"
        r"|these\s+days)\b",
        _now,
    ),
)
