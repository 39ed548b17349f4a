"""A fact's valid time, read from its text against its document's event time, and its guard.

:func:`resolve_fact_interval` reads the time a fact tells of (:func:`told_time`: its first
time expression that names a period or a bound, else its first point, resolved against the
event time) and whether the fact speaks of a past state:

- nothing said: ``[event_time, open)``, valid from the document's event time;
- a past state only ('former', 'ex-', 'was CEO', 'no longer'): ``[open, event_time)``;
- 'since X' / 'from X': ``[X's start, open)``; 'after X': ``[X's end, open)``;
- 'until X' / 'before X': ``[event_time, X's start)`` when X is still ahead of the event
  time, else ``[open, X's start)``; 'through X' ends at X's end instead;
- 'from A to B' / 'between A and B': ``[A's start, B's end)``, both named periods included;
- a period or point ('in 2019', 'now'): ``[its start, open)``.

With a past state, an open end closes at the event time. 'was' followed by a participle
('was elected', 'was born') tells of an event, not a past state, and does not close it.

:func:`check_interval` guards any valid time before it is stored (from the text or from the
LM): it refuses an interval that ends before it starts, an empty one, and ends more than
:data:`MAX_VALID_AFTER_EVENT` after the event time.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from factstream.errors import IntervalImplausible, IntervalInvalid
from factstream.temporal.intervals import ValidInterval, utc
from factstream.temporal.parse import TimeKind, TimeReference, find_times, parse_time, strip_time

__all__ = [
    "MAX_VALID_AFTER_EVENT",
    "check_interval",
    "resolve_fact_interval",
    "resolve_time_expression",
    "says_past",
    "told_time",
]

# About five years: a document rarely knows what will hold further ahead than that, and a
# date beyond it is more likely a misreading (a year typed wrong, a plan taken for a fact).
MAX_VALID_AFTER_EVENT = timedelta(days=5 * 366)

# Past participles that make 'was X' an event ('was born', 'was elected') rather than a state.
_EVENT_PARTICIPLES = (
    r"\w+ed|born|made|held|built|sold|won|led|hit|cut|shot|struck|caught|brought|bought|told"
    r"|paid|sent|left|lost|kept|met|found|named|taken|given|chosen|seen|written|driven"
    r"|broken|stolen|beaten|sworn|fallen|hidden|shaken|forgotten|thrown|shown|known"
)
_PAST = re.compile(
    r"\b(?:former|formerly|previously|no\s+longer|used\s+to|had\s+been)\b|\bex-(?=[a-z])"
    rf"|\b(?:was|were)\b(?!\s+(?:{_EVENT_PARTICIPLES})\b)",
    re.IGNORECASE | re.ASCII,
)


def says_past(text: str) -> bool:
    """Whether ``text`` speaks of a state that no longer holds ('former', 'ex-', 'was CEO')."""
    return _PAST.search(text) is not None


def told_time(text: str, said_at: datetime) -> TimeReference | None:
    """The time a statement tells of, resolved against when it was said; None if it names none.

    Its first time expression that names a period or a bound ('yesterday', 'last weekend',
    'since 2019'), else its first point ('now', 'currently'): 'I'm currently reading the
    book I bought last week' tells of last week. A fact's valid time starts from this
    reading (:func:`resolve_fact_interval`), and so does a conversation turn's date.

    Raises:
        IntervalInvalid: ``said_at`` has no time zone.
    """
    found = find_times(text, said_at)
    periods = [reference for reference in found if reference.kind is not TimeKind.POINT]
    return periods[0] if periods else (found[0] if found else None)


def resolve_fact_interval(text: str, event_time: datetime) -> ValidInterval:
    """When the fact ``text`` held, read from its time expression against ``event_time``.

    The rules are in the module docstring. The result is not checked for plausibility: pass
    its ends to :func:`check_interval` before storing it.

    Raises:
        IntervalInvalid: ``event_time`` has no time zone.
    """
    event = utc(event_time)
    reference = told_time(text, event)
    rest = text if reference is None else strip_time(text, reference)
    past = says_past(rest)
    if reference is None:
        return ValidInterval(None, event) if past else ValidInterval(event, None)
    return _from_reference(reference, event, past)


def resolve_time_expression(
    expression: str, fact_text: str, event_time: datetime
) -> ValidInterval | None:
    """When the fact ``fact_text`` held, read from a time expression given apart from it.

    The same rules as :func:`resolve_fact_interval`, with the time read from
    ``expression`` (an LM may name the expression that bounds a fact, and the fact text
    may carry others) and the past state from ``fact_text``. None when ``expression``
    names no time the parser knows ('when the war ended').

    Raises:
        IntervalInvalid: ``event_time`` has no time zone.
    """
    event = utc(event_time)
    reference = parse_time(expression, event)
    if reference is None:
        return None
    rest = re.sub(re.escape(expression), " ", fact_text, flags=re.IGNORECASE)
    return _from_reference(reference, event, says_past(rest))


def _from_reference(reference: TimeReference, event: datetime, past: bool) -> ValidInterval:
    interval = reference.interval
    if reference.kind is TimeKind.BETWEEN:
        return interval
    if reference.kind is TimeKind.BEFORE:
        ahead = interval.end is not None and interval.end > event
        return ValidInterval(event if ahead and not past else None, interval.end)
    # since/after X, a period, a point: valid from its start; a past state closes at the event.
    start = interval.start
    closes = past and (start is None or start < event)
    return ValidInterval(start, event if closes else None)


def check_interval(
    valid_from: datetime | None, valid_to: datetime | None, event_time: datetime
) -> ValidInterval:
    """The valid interval ``[valid_from, valid_to)`` of a fact from a document at ``event_time``.

    Raises:
        IntervalInvalid: a time has no zone, or ``valid_from`` is not before ``valid_to``.
        IntervalImplausible: an end lies more than :data:`MAX_VALID_AFTER_EVENT` after the
            event time.
    """
    interval = ValidInterval(valid_from, valid_to)
    if interval.is_empty:
        raise IntervalInvalid(f"valid interval is empty: it starts and ends at {valid_from}")
    event = utc(event_time)
    limit = _latest_plausible(event)
    for when in (interval.start, interval.end):
        if when is not None and limit is not None and when > limit:
            raise IntervalImplausible(when, event, MAX_VALID_AFTER_EVENT)
    return interval


def _latest_plausible(event: datetime) -> datetime | None:
    # None: the limit lies past the last representable instant, so nothing exceeds it.
    try:
        return event + MAX_VALID_AFTER_EVENT
    except OverflowError:
        return None
