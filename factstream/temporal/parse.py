"""A rule-based parser for time expressions in questions and fact text.

``parse_time("Who was mayor in 2019?", now)`` finds the first time expression, resolves it
against ``now`` (the request time, or the question's ``as_of``) and returns a
:class:`TimeReference`: the interval, what kind of reference it is, and the matched span, so
that the caller can cut it from the question (:func:`strip_time`) and say which interval it
used (:meth:`TimeReference.describe`).

Semantics (all calendar periods are UTC; ends are exclusive):

- A *period* ('in 2019', 'March 2019', 'Q3 2018', 'last year', 'two years ago',
  'yesterday', '2019-03-04') is the interval of that calendar period, and means "at some time
  within it". 'last/this/next year' (quarter, month, week) is the calendar period before, at
  or after ``now``'s; 'N years ago' is the calendar year (month, week, day) that held N
  units before ``now``; 'the past year' / 'the last 3 months' runs from that long before
  ``now`` up to ``now``; 'last March' is the latest March before ``now``'s month, 'March'
  alone the latest March up to it; 'Monday' and 'last Monday' are the latest Monday before
  today.
- A *point* ('now', 'currently', 'at present') is the instant ``now``.
- *before* X: 'before X' and 'until X' end where X starts; 'through X' ends where X ends.
- *after* X: 'since X' and 'from X' start where X starts; 'after X' starts where X ends.
  'from' before a time that lies wholly behind the speaker ('yesterday', 'last Friday',
  'two weeks ago') says where something comes from, not when it began ('a photo from
  last Friday'): the period itself, unless 'on' or 'onwards' follows.
- *between* A and B ('between 2015 and 2018', 'from 2001 to 2004'): from A's start to B's
  end, both named periods included (written the other way round, the same interval).

Expressions relative to an event ('when X was CEO', 'before the merger') are not parsed:
they are left to the LM. Neither are times that cannot be represented (February 30).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from factstream.temporal.anchors import Anchor, find_anchors
from factstream.temporal.intervals import ValidInterval, utc

__all__ = ["TimeKind", "TimeReference", "find_times", "parse_time", "strip_time"]

_FLAGS = re.IGNORECASE | re.ASCII


class TimeKind(StrEnum):
    """What a time expression says of the interval it names."""

    POINT = "point"
    PERIOD = "period"
    BEFORE = "before"
    AFTER = "after"
    BETWEEN = "between"


@dataclass(frozen=True, slots=True)
class TimeReference:
    """A time expression found at ``span`` of a text: ``text`` is what it said."""

    interval: ValidInterval
    kind: TimeKind
    span: tuple[int, int]
    text: str

    def describe(self) -> str:
        """'"in 2019" = 2019-01-01 to 2020-01-01': what was read and the interval used."""
        return f'"{self.text}" = {self.interval.describe()}'


def _ends_at_start(x: ValidInterval) -> ValidInterval:
    return ValidInterval(None, x.start)


def _ends_at_end(x: ValidInterval) -> ValidInterval:
    return ValidInterval(None, x.end)


def _starts_at_start(x: ValidInterval) -> ValidInterval:
    return ValidInterval(x.start, None)


def _starts_at_end(x: ValidInterval) -> ValidInterval:
    return ValidInterval(x.end, None)


# A connective right before an anchor, and what it makes of the anchor's interval.
_CONNECTIVES: tuple[tuple[re.Pattern[str], TimeKind, Callable[[ValidInterval], ValidInterval]], ...]
_CONNECTIVES = tuple(
    (re.compile(rf"\b(?:{words})\s+\Z", _FLAGS), kind, bound)
    for words, kind, bound in (
        (r"before|prior\s+to|earlier\s+than", TimeKind.BEFORE, _ends_at_start),
        (r"until|till|up\s+to|up\s+until", TimeKind.BEFORE, _ends_at_start),
        (r"through|thru", TimeKind.BEFORE, _ends_at_end),
        (r"since|from|starting(?:\s+in)?|beginning(?:\s+in)?", TimeKind.AFTER, _starts_at_start),
        (r"after|later\s+than", TimeKind.AFTER, _starts_at_end),
    )
)
_FROM = re.compile(r"from\s+", _FLAGS)
# A time the speaker places wholly behind them: yesterday, last <unit or day>, N <units> ago.
_PAST_DEICTIC = re.compile(
    r"(?:the\s+day\s+before\s+)?yesterday|last\s+\w+(?:\s+\w+)?|.+\s+ago|"
    r"earlier\s+(?:this|today)\s*\w*",
    _FLAGS,
)
_ONWARDS = re.compile(r"\s*(?:on\b|onwards?\b|forward\b)", _FLAGS)
# 'between A and B', 'from A to B', '2019-2020': the opening words before A, what may stand
# between A and B.
_PAIRS = (
    (re.compile(r"\bbetween\s+\Z", _FLAGS), re.compile(r"\s+(?:and|&)\s+", _FLAGS)),
    (
        re.compile(r"\bfrom\s+\Z", _FLAGS),
        re.compile(r"\s+(?:to|until|till|through|thru)\s+|\s*[-\u2013]\s*", _FLAGS),
    ),
    (re.compile(r"\Z"), re.compile("[-\u2013]")),
)


def parse_time(text: str, now: datetime) -> TimeReference | None:
    """The first time expression in ``text``, resolved against ``now``; None if there is none.

    Raises:
        IntervalInvalid: ``now`` has no time zone.
    """
    found = find_times(text, now)
    return found[0] if found else None


def find_times(text: str, now: datetime) -> list[TimeReference]:
    """Every time expression in ``text``, left to right, resolved against ``now``.

    Raises:
        IntervalInvalid: ``now`` has no time zone.
    """
    anchors = find_anchors(text, utc(now))
    found: list[TimeReference] = []
    i = 0
    while i < len(anchors):
        reference, used = _reference_at(text, anchors, i)
        if reference is not None:
            found.append(reference)
        i += used
    return found


def strip_time(text: str, reference: TimeReference) -> str:
    """``text`` without the expression ``reference`` found in it, spaces tidied."""
    start, end = reference.span
    rest = re.sub(r"\s+", " ", f"{text[:start]} {text[end:]}")
    return re.sub(r" (?=[?.!,;:])", "", rest).strip()


def _reference_at(text: str, anchors: list[Anchor], i: int) -> tuple[TimeReference | None, int]:
    # The reference anchor i starts (a pair takes two anchors), and how many anchors it used.
    anchor = anchors[i]
    if i + 1 < len(anchors) and (pair := _pair(text, anchor, anchors[i + 1])) is not None:
        return pair, 2
    if (bounded := _bounded(text, anchor)) is not None:
        return bounded, 1
    if anchor.weak:
        return None, 1
    kind = TimeKind.POINT if anchor.interval.is_point else TimeKind.PERIOD
    return _reference(text, anchor.interval, kind, anchor.start, anchor.end), 1


def _pair(text: str, first: Anchor, second: Anchor) -> TimeReference | None:
    for opening, joint in _PAIRS:
        opened = opening.search(text, 0, first.start)
        if opened is not None and joint.fullmatch(text, first.end, second.start):
            interval = first.interval.hull(second.interval)
            return _reference(text, interval, TimeKind.BETWEEN, opened.start(), second.end)
    return None


def _bounded(text: str, anchor: Anchor) -> TimeReference | None:
    for pattern, kind, bound in _CONNECTIVES:
        said = pattern.search(text, 0, anchor.start)
        if said is not None:
            if _from_the_past(text, anchor, said):
                return _reference(text, anchor.interval, TimeKind.PERIOD, said.start(), anchor.end)
            return _reference(text, bound(anchor.interval), kind, said.start(), anchor.end)
    return None


def _from_the_past(text: str, anchor: Anchor, said: re.Match[str]) -> bool:
    # 'from' + a time wholly behind the speaker ('a pic from last Friday'), no 'on' after it.
    return (
        _FROM.fullmatch(said.group()) is not None
        and _PAST_DEICTIC.fullmatch(text, anchor.start, anchor.end) is not None
        and _ONWARDS.match(text, anchor.end) is None
    )


def _reference(
    text: str, interval: ValidInterval, kind: TimeKind, start: int, end: int
) -> TimeReference:
    return TimeReference(interval, kind, (start, end), text[start:end])
