"""Questions with a date, from CLARK-News triples and their Wikidata validity (no LM).

Every triple with a usable interval becomes a fact valid over it. For each such interval
``[start, end)`` questions "On DATE, what was SUBJECT's RELATION?" are asked on a day
inside it (its middle; a year in for an open end), on the day before it starts and on the
day it ends (its end is exclusive). A question's gold answers are the facts of that
subject and relation whose interval contains the day; a day that none contains has no
answer and is not asked (the day before the first fact of a chain, after the last one).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from enum import StrEnum

from factstream.temporal.intervals import ValidInterval, day
from factstream_lab.eval.datasets import Triple

__all__ = [
    "OPEN_END_INSIDE",
    "Position",
    "TemporalQuestion",
    "TripleInterval",
    "build_questions",
    "phrase",
    "triple_intervals",
]

# Where "inside" an interval open at one end lies: this far from its known end.
OPEN_END_INSIDE = timedelta(days=365)


class Position(StrEnum):
    """Where a question's day lies relative to the interval it was made from."""

    INSIDE = "inside"
    BEFORE = "before"
    AFTER = "after"


@dataclass(frozen=True)
class TripleInterval:
    """A triple with the interval it held over."""

    triple: Triple
    interval: ValidInterval


@dataclass(frozen=True)
class TemporalQuestion:
    """One dated question and the triples (by index) that answer it."""

    text: str
    subject: str
    relation: str
    day: date
    position: Position
    source: int  # the triple whose interval the day was chosen from
    gold: frozenset[int]


def triple_intervals(triples: list[Triple]) -> tuple[list[TripleInterval], dict[str, int]]:
    """The triples with a usable interval, and how many were unusable, by why.

    Unusable: "unknown date" (Wikidata's unknown value, a blank node, where a date should
    be: it ended, nobody knows when), "no interval" (neither end) and "empty" (dates at year
    precision widened to the same day: it holds at no instant).
    """
    usable, unusable = [], Counter[str]()
    for triple in triples:
        try:
            start, end = _time(triple.valid_from), _time(triple.valid_to)
        except ValueError:
            unusable["unknown date"] += 1
            continue
        if start is None and end is None:
            unusable["no interval"] += 1
        elif start is not None and end is not None and start >= end:
            unusable["empty"] += 1
        else:
            usable.append(TripleInterval(triple, ValidInterval(start, end)))
    return usable, dict(unusable)


def phrase(subject: str, relation: str, when: date) -> str:
    """'On March 4, 2019, what was Mike Lawler's position held?'"""
    said = f"{when:%B} {when.day}, {when.year}"
    return f"On {said}, what was {subject}'s {relation}?"


def build_questions(facts: list[TripleInterval]) -> list[TemporalQuestion]:
    """Every answerable question, once per (subject, relation, day), inside first."""
    chains: dict[tuple[str, str], list[TripleInterval]] = defaultdict(list)
    for fact in facts:
        chains[(fact.triple.subject, fact.triple.relation)].append(fact)
    questions: dict[tuple[str, str, date], TemporalQuestion] = {}
    for position in Position:
        for (subject, relation), chain in chains.items():
            for fact in chain:
                when = _day_at(fact.interval, position)
                if when is None or (subject, relation, when) in questions:
                    continue
                gold = frozenset(f.triple.index for f in chain if f.interval.overlaps(day(when)))
                if gold:
                    questions[(subject, relation, when)] = TemporalQuestion(
                        phrase(subject, relation, when),
                        subject,
                        relation,
                        when,
                        position,
                        fact.triple.index,
                        gold,
                    )
    return list(questions.values())


def _day_at(interval: ValidInterval, position: Position) -> date | None:
    start, end = interval.start, interval.end
    if position is Position.BEFORE:
        return None if start is None else (start - timedelta(days=1)).date()
    if position is Position.AFTER:
        return None if end is None else end.date()
    if start is None:
        assert end is not None  # noqa: S101 - triple_intervals drops intervals open at both ends
        return (end - OPEN_END_INSIDE).date()
    if end is None:
        return (start + OPEN_END_INSIDE).date()
    return (start + (end - start) / 2).date()


def _time(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)
