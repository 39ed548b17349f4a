"""Relative time resolved: the date a temporal question's evidence tells, against the gold.

For a temporal question (category 2), the evidence turn is read with the product's time
reading (:func:`factstream.temporal.told_time`, the same reading a fact's valid time
starts from) against its session's date: "yesterday" said on 8 May 2023 is 7 May 2023. A
turn that names no time tells of its session's day. The gold answer is normalised to the
interval it names (:func:`gold_interval`): a day ("7 May 2023"), a weekend ("the weekend
before 17 July 2023"), a week ("the week before 9 June 2023", "the week of ..."), a month
("June 2023"), a season ("the summer of 2022") or a year ("2022"). The reading is right
when its interval lies within the gold's: as precise as the gold or more, and inside it.

Gold answers that name no such interval ("4 years", "10 years ago": relative to nothing
given, "Since 2016": a bound, "13 August": no year) are counted apart, not scored.
The gold reading is written here, apart from the parser, so that a parser mistake is not
repeated on the gold side.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from factstream.temporal import ValidInterval, told_time
from factstream.temporal import intervals as iv
from factstream.temporal.anchors import find_anchors
from factstream_lab.eval.locomo.data import Conversation, Question

__all__ = [
    "GoldTime",
    "Reading",
    "gold_interval",
    "granularity",
    "mentions_time",
    "read_evidence",
    "resolved_within",
]

_FLAGS = re.IGNORECASE | re.ASCII
_WEEKDAYS = {
    "monday": 0, "mon": 0, "tuesday": 1, "tue": 1, "tues": 1, "wednesday": 2, "wed": 2,
    "thursday": 3, "thu": 3, "thur": 3, "thurs": 3, "friday": 4, "fri": 4,
    "saturday": 5, "sat": 5, "sunday": 6, "sun": 6,
}  # fmt: skip
_COUNTS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "last": -1}
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_WORDS = "|".join(sorted(_WEEKDAYS, key=len, reverse=True))
_BEFORE = re.compile(
    rf"(?:the\s+)?(?:(?P<n>[0-9]+|{'|'.join(_COUNTS)})\s+)?"
    rf"(?P<unit>{_WORDS}|days?|weeks?|weekends?)\s+(?P<rel>before|of)\s+(?P<date>.+)",
    _FLAGS,
)
_ORDINAL = re.compile(
    rf"(?:the\s+)?(?P<ord>{'|'.join(_ORDINALS)})\s+(?P<unit>weekend|{_WORDS})\s+of\s+(?P<date>.+)",
    _FLAGS,
)
_SEASON = re.compile(
    rf"(?:the\s+)?(?P<season>{'|'.join(_SEASONS)})\s+(?:of\s+)?(?P<year>[12][0-9]{{3}})", _FLAGS
)
_HEDGES = re.compile(r"^(?:around|about|approximately|roughly|in|on|during)\s+", _FLAGS)
# Two reference times far apart: an anchor that resolves alike against both names its own
# date; one that does not ("10 years ago") is relative to a time the gold does not give.
_PROBES = (datetime(2001, 3, 7, 12, tzinfo=UTC), datetime(2037, 10, 21, 12, tzinfo=UTC))
# A word that says when, whether or not the parser reads it: the evidence turns that carry
# a time expression (the goal's denominator) are found with this, not with the parser.
_TIME_WORDS = re.compile(
    r"\b(?:yesterday|today|tonight|tomorrow|ago|weekends?|weeks?|months?|years?|days?|"
    r"nights?|morning|evening|afternoon|recently|lately|summer|winter|spring|autumn|fall|"
    rf"{_WORDS}|january|february|march|april|may|june|july|august|september|october|"
    r"november|december|[12][0-9]{3})\b",
    _FLAGS,
)


@dataclass(frozen=True)
class GoldTime:
    """The interval a gold answer names, and its granularity (day, weekend, week, ...)."""

    interval: ValidInterval
    granularity: str


@dataclass(frozen=True)
class Reading:
    """What the evidence told: the interval, the turn, the expression (None: the
    session's day, the turn named no time)."""

    interval: ValidInterval
    turn: str
    expression: str | None


def granularity(interval: ValidInterval) -> str:
    """day, weekend, week, month, season, year, or 'other' by the interval's length."""
    if interval.start is None or interval.end is None:
        return "other"
    length = interval.end - interval.start
    if length % timedelta(days=1):
        return "other"
    days = length.days
    names = {1: "day", 2: "weekend", 7: "week", 91: "season", 92: "season", 90: "season"}
    if days in names:
        return names[days]
    if 28 <= days <= 31:
        return "month"
    return "year" if days in (365, 366) else "other"


def gold_interval(answer: str) -> GoldTime | None:
    """The interval a gold answer names, or None when it names none (rules: module doc)."""
    text = _HEDGES.sub("", " ".join(answer.split()).strip(" .")).strip()
    found = _relative_gold(text) or _ordinal_gold(text) or _season_gold(text) or _date(text)
    if found is None:
        return None
    return GoldTime(found, granularity(found))


def _relative_gold(text: str) -> ValidInterval | None:
    match = _BEFORE.fullmatch(text)
    if match is None:
        return None
    anchor = _date(match["date"])
    if anchor is None or anchor.start is None or granularity(anchor) != "day":
        return None
    d, unit, n = anchor.start.date(), match["unit"].lower(), _count(match["n"])
    if match["rel"].lower() == "of":
        return _period_of(unit, d) if n == 1 else None
    if unit.rstrip("s") == "day":
        return iv.day(d - timedelta(days=n))
    if unit.rstrip("s") == "week":
        return iv.week(d - timedelta(weeks=n))
    if unit.rstrip("s") == "weekend":
        return _weekend(_last_weekend(d) - timedelta(weeks=n - 1))
    if unit in _WEEKDAYS and n == 1:
        return iv.day(d - timedelta(days=(d.weekday() - _WEEKDAYS[unit] - 1) % 7 + 1))
    return None


def _period_of(unit: str, d: date) -> ValidInterval | None:
    # 'the week of D', 'the weekend of D' (a Saturday or Sunday), 'the day of D'.
    if unit == "week":
        return iv.week(d)
    if unit == "weekend" and d.weekday() >= 5:
        return _weekend(d - timedelta(days=d.weekday() - 5))
    return iv.day(d) if unit == "day" else None


def _ordinal_gold(text: str) -> ValidInterval | None:
    match = _ORDINAL.fullmatch(text)
    if match is None:
        return None
    month = _date(match["date"])
    if month is None or month.start is None or granularity(month) != "month":
        return None
    first = month.start.date()
    unit = match["unit"].lower()
    weekday = 5 if unit == "weekend" else _WEEKDAYS[unit]
    days = [
        first + timedelta(days=i)
        for i in range(31)
        if (first + timedelta(days=i)).month == first.month
    ]
    matching = [d for d in days if d.weekday() == weekday]
    ordinal = _ORDINALS[match["ord"].lower()]
    if ordinal > len(matching):
        return None
    chosen = matching[ordinal - 1] if ordinal > 0 else matching[-1]
    return _weekend(chosen) if unit == "weekend" else iv.day(chosen)


def _season_gold(text: str) -> ValidInterval | None:
    match = _SEASON.fullmatch(text)
    if match is None:
        return None
    first = _SEASONS[match["season"].lower()]
    start = iv.month(int(match["year"]), first)
    return start.hull(iv.month(int(match["year"]) + (first + 2) // 13, (first + 1) % 12 + 1))


def _date(text: str) -> ValidInterval | None:
    # One absolute date, month or year that is the whole text.
    text = text.strip(" .,")
    readings = [find_anchors(text, probe) for probe in _PROBES]
    if any(len(found) != 1 for found in readings):
        return None
    first, second = readings[0][0], readings[1][0]
    if (first.start, first.end) != (0, len(text)) or first.interval != second.interval:
        return None
    return first.interval


def _count(word: str | None) -> int:
    if word is None:
        return 1
    return int(word) if word.isdigit() else _COUNTS[word.lower()]


def _last_weekend(d: date) -> date:
    # The Saturday of the latest weekend that ended before ``d`` (on a Sunday: the one before).
    monday = d - timedelta(days=d.weekday())
    return monday - timedelta(days=2)


def _weekend(saturday: date) -> ValidInterval:
    return iv.day(saturday).hull(iv.day(saturday + timedelta(days=1)))


def mentions_time(text: str) -> bool:
    """Whether ``text`` has a word that says when (a broad list, apart from the parser)."""
    return _TIME_WORDS.search(text) is not None


def read_evidence(conversation: Conversation, question: Question) -> Reading | None:
    """What the question's evidence tells: the first evidence turn that names a time, read
    against its session's date; else the first evidence turn's session day. None when no
    evidence turn is in the conversation."""
    turns = [t for t in question.evidence if t in conversation.turns]
    for ident in turns:
        session = conversation.session_of[ident]
        reference = told_time(conversation.turns[ident].said, session.time)
        if reference is not None:
            return Reading(reference.interval, ident, reference.text)
    if not turns:
        return None
    return Reading(iv.day(conversation.session_of[turns[0]].time.date()), turns[0], None)


def resolved_within(reading: ValidInterval, gold: ValidInterval) -> bool:
    """Whether the reading lies within the gold interval (bounded, non-empty)."""
    if reading.start is None or reading.end is None or reading.is_empty:
        return False
    inside = gold.intersect(reading)
    return inside is not None and inside == reading
