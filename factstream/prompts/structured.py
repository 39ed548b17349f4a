"""Structured facts as an LM states them: fields, schema, checks, repairs, valid interval.

A structured fact is a fact's text with what the LM can tell of its shape (``subject``,
``relation``, ``object``, ``object_type``) and of its time: ``time``, the expression of the
document that bounds it, copied verbatim, and ``valid_from`` / ``valid_to`` as ISO dates.

A small model's date arithmetic is not trusted. :func:`fact_interval` resolves the interval
in code (:mod:`factstream.temporal`) against the document's event time, in this order: the
verbatim ``time`` expression; else a time expression in the fact's text; else the LM's
dates; else none said: valid from the event time, or up to it for a past state ('was',
'former').

:func:`fact_problems` lists what breaks a fact's rules, by kind:

- ``structure``: subject, relation, object and object_type come together or not at all;
  the object type is a known one; subject and object appear in the fact's text (case,
  punctuation and spacing aside).
- ``time``: the time expression appears in the document.
- ``interval``: a date is not an ISO date, or the interval fails
  :func:`factstream.temporal.check_interval` (it ends before it starts, or lies far beyond
  the event time).

:func:`repair_fact` keeps what can be kept of a fact whose problems outlasted the retries:
without its structure, without its time expression and dates, or without the LM's dates.
The fact itself is always kept: its text is what the knowledge base stores, the structure
and the interval describe it. When even the repaired fact's interval fails (its own text
names a time too far ahead), :func:`interval_or_default` makes it valid as if it named no
time (:func:`default_interval`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from factstream.errors import IntervalInvalid
from factstream.prompts.models import DocumentView, strict_object
from factstream.temporal import (
    ValidInterval,
    check_interval,
    parse_time,
    resolve_fact_interval,
    resolve_time_expression,
    says_past,
)

__all__ = [
    "FACT_JSON",
    "FIELD_RULES",
    "OBJECT_TYPES",
    "ProblemKind",
    "FactProblem",
    "StructuredFact",
    "default_interval",
    "fact_interval",
    "fact_problems",
    "fact_schema",
    "interval_or_default",
    "mentions",
    "repair_fact",
    "salvage_fact",
]

OBJECT_TYPES = ("person", "organization", "place", "time", "quantity", "event", "other")
ProblemKind = Literal["structure", "time", "interval"]

_PART_MAX_CHARS = 80  # subject, relation, object
_TIME_MAX_CHARS = 60
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

# The rules of the fields, shared by every prompt that answers structured facts. No worked
# example: a small model copies the entities of an example into its answer.
# How the prompts write one structured fact in their answer format.
FACT_JSON = (
    '{"text": ..., "subject": ..., "relation": ..., "object": ..., "object_type": ..., '
    '"time": ..., "valid_from": ..., "valid_to": ...}'
)

FIELD_RULES = """Fields of a fact:
- "text": one simple, standalone sentence. Write out what pronouns and phrases like \
"the company" refer to. Keep the words that say when it holds.
- "subject", "relation", "object": the fact as a triple, subject and object written exactly \
as they appear in "text"; "object_type": one of person, organization, place, time, \
quantity, event, other. All four null when the fact is not one triple.
- "time": the words of the document's text that say when the fact holds, copied exactly \
(for instance "since ...", "from ... to ...", "in ...", "until ..."), or null when the \
text gives none. Not the document's date.
- "valid_from", "valid_to": the first day the fact holds and the first day it no longer \
holds, as YYYY-MM-DD, or null when not known. A fact without time words holds from the \
document's date."""


class StructuredFact(BaseModel):
    """One fact as the LM states it; every field but ``text`` may be null.

    Fields are plain strings so that a malformed value (an unknown object type, a date
    that is not one) is a problem of this fact, repaired on its own, not a parse failure of
    the whole answer.
    """

    model_config = ConfigDict(frozen=True)

    text: str
    subject: str | None = None
    relation: str | None = None
    object: str | None = None
    object_type: str | None = None
    time: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None

    @property
    def has_structure(self) -> bool:
        """Whether any of subject, relation, object, object_type is given."""
        parts = (self.subject, self.relation, self.object, self.object_type)
        return any(p is not None for p in parts)


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def fact_schema(text_max_chars: int, time_max_chars: int = _TIME_MAX_CHARS) -> dict[str, Any]:
    """The JSON schema of one structured fact whose text has at most ``text_max_chars``, and
    its time expression at most ``time_max_chars`` (never more than 60); subject, relation
    and object are no longer than the text."""
    part_chars = min(_PART_MAX_CHARS, text_max_chars)
    part = _nullable({"type": "string", "minLength": 1, "maxLength": part_chars})
    time_chars = max(1, min(_TIME_MAX_CHARS, time_max_chars))
    day = _nullable({"type": "string", "pattern": f"^{_ISO_DATE.pattern}$"})
    properties = {
        "text": {"type": "string", "minLength": 1, "maxLength": text_max_chars},
        "subject": part,
        "relation": part,
        "object": part,
        "object_type": _nullable({"type": "string", "enum": list(OBJECT_TYPES)}),
        "time": _nullable({"type": "string", "minLength": 1, "maxLength": time_chars}),
        "valid_from": day,
        "valid_to": day,
    }
    return dict(strict_object("fact", properties).schema)


@dataclass(frozen=True)
class FactProblem:
    """Why a fact breaks a rule; ``kind`` is a bounded metric label."""

    kind: ProblemKind
    message: str


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", unicodedata.normalize("NFKC", text).casefold()))


def mentions(text: str, part: str) -> bool:
    """Whether ``part`` appears in ``text`` as whole words (case, punctuation, spaces aside)."""
    words = _words(part)
    return bool(words) and f" {words} " in f" {_words(text)} "


def _structure_problems(fact: StructuredFact) -> list[FactProblem]:
    if not fact.has_structure:
        return []
    parts = {
        "subject": fact.subject,
        "relation": fact.relation,
        "object": fact.object,
        "object_type": fact.object_type,
    }
    missing = [name for name, value in parts.items() if value is None or not value.strip()]
    if missing:
        return [
            FactProblem(
                "structure",
                f"give subject, relation, object and object_type together or none ("
                f"{', '.join(missing)} missing)",
            )
        ]
    problems = []
    if fact.object_type not in OBJECT_TYPES:
        problems.append(
            FactProblem("structure", f"object_type {fact.object_type!r} is not one of the types")
        )
    for name in ("subject", "object"):
        value = parts[name] or ""
        if not mentions(fact.text, value):
            problems.append(FactProblem("structure", f"{name} {value!r} is not in the fact's text"))
    return problems


def _time_problems(fact: StructuredFact, document: DocumentView) -> list[FactProblem]:
    if fact.time is None or mentions(document.body, fact.time):
        return []
    return [FactProblem("time", f"time {fact.time!r} is not words of the document")]


def _lm_date(value: str | None, name: str) -> datetime | None:
    if value is None:
        return None
    try:
        if not _ISO_DATE.fullmatch(value):
            raise ValueError(value)
        return datetime.combine(date.fromisoformat(value), datetime.min.time(), tzinfo=UTC)
    except ValueError:
        raise IntervalInvalid(f"{name} {value!r} is not a date (YYYY-MM-DD)") from None


def fact_interval(fact: StructuredFact, event_time: datetime) -> ValidInterval:
    """When ``fact`` held, resolved in code against ``event_time`` (order in the docstring).

    Raises:
        IntervalInvalid: a date is malformed, or the interval ends before it starts.
        IntervalImplausible: an end lies far beyond the event time.
    """
    interval = None
    if fact.time is not None:
        interval = resolve_time_expression(fact.time, fact.text, event_time)
    if interval is None and parse_time(fact.text, event_time) is not None:
        interval = resolve_fact_interval(fact.text, event_time)
    if interval is None and (fact.valid_from is not None or fact.valid_to is not None):
        start = _lm_date(fact.valid_from, "valid_from")
        interval = ValidInterval(start, _lm_date(fact.valid_to, "valid_to"))
    if interval is None:
        interval = default_interval(fact.text, event_time)
    return check_interval(interval.start, interval.end, event_time)


def default_interval(text: str, event_time: datetime) -> ValidInterval:
    """The interval of a fact that names no time: from the event time on, or up to it for a
    past state ('was', 'former')."""
    return ValidInterval(None, event_time) if says_past(text) else ValidInterval(event_time, None)


def interval_or_default(fact: StructuredFact, event_time: datetime) -> ValidInterval:
    """:func:`fact_interval`, or :func:`default_interval` where it fails."""
    try:
        return fact_interval(fact, event_time)
    except IntervalInvalid:
        return default_interval(fact.text, event_time)


def fact_problems(fact: StructuredFact, document: DocumentView) -> list[FactProblem]:
    """Every rule ``fact`` breaks as a fact of ``document`` (none: it passes)."""
    problems = _structure_problems(fact) + _time_problems(fact, document)
    try:
        fact_interval(fact, document.timestamp)
    except IntervalInvalid as exc:
        problems.append(FactProblem("interval", str(exc)))
    return problems


def salvage_fact(fact: StructuredFact, document: DocumentView) -> tuple[StructuredFact, list[str]]:
    """``fact`` without the fields still refused, and the kinds refused (sorted, once each)."""
    problems = fact_problems(fact, document)
    return repair_fact(fact, problems), sorted({problem.kind for problem in problems})


def repair_fact(fact: StructuredFact, problems: list[FactProblem]) -> StructuredFact:
    """``fact`` without the fields its ``problems`` refuse (see the module docstring)."""
    kinds = {p.kind for p in problems}
    update: dict[str, None] = {}
    if "structure" in kinds:
        update |= dict.fromkeys(("subject", "relation", "object", "object_type"))
    if "time" in kinds:
        update |= dict.fromkeys(("time", "valid_from", "valid_to"))
    if "interval" in kinds:
        update |= dict.fromkeys(("valid_from", "valid_to"))
    return fact.model_copy(update=update)
