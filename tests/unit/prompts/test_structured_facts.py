"""Structured facts: the interval is resolved in code, the fields are checked against the text."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from factstream.prompts.models import DocumentView
from factstream.prompts.structured import (
    StructuredFact,
    default_interval,
    fact_interval,
    fact_problems,
    fact_schema,
    interval_or_default,
    repair_fact,
)
from factstream.temporal import ValidInterval

EVENT = datetime(2024, 5, 6, tzinfo=UTC)
DOC = DocumentView(
    text="Parker was CEO of Acme from 2001 to 2004. Quinn has led Acme since Monday.",
    timestamp=EVENT,
)


def utc(year: int, month: int = 1, day: int = 1) -> datetime:
    return datetime(year, month, day, tzinfo=UTC)


def fact(text: str, **fields: str | None) -> StructuredFact:
    return StructuredFact(text=text, **fields)


def kinds(f: StructuredFact) -> list[str]:
    return [p.kind for p in fact_problems(f, DOC)]


def test_the_time_expression_gives_the_interval_not_the_lm_dates() -> None:
    parker = fact(
        "Parker was CEO of Acme.",
        time="from 2001 to 2004",
        valid_from="2003-07-01",  # the LM's own arithmetic, wrong: ignored
        valid_to="2004-01-01",
    )
    interval = fact_interval(parker, EVENT)
    assert interval == ValidInterval(utc(2001), utc(2005))
    assert not interval.contains(EVENT)  # he is not CEO now
    assert kinds(parker) == []


def test_a_time_in_the_fact_text_counts_when_the_lm_names_none() -> None:
    quinn = fact("Quinn has led Acme since Monday.")
    assert fact_interval(quinn, EVENT) == ValidInterval(utc(2024, 4, 29), None)


def test_the_lm_dates_count_only_without_a_time_expression() -> None:
    dated = fact("Quinn leads Acme.", valid_from="2024-04-29")
    assert fact_interval(dated, EVENT) == ValidInterval(utc(2024, 4, 29), None)


def test_nothing_said_is_valid_from_the_event_time_or_up_to_it_when_past() -> None:
    assert fact_interval(fact("Quinn leads Acme."), EVENT) == ValidInterval(EVENT, None)
    assert fact_interval(fact("Parker was CEO of Acme."), EVENT) == ValidInterval(None, EVENT)
    assert default_interval("Quinn leads Acme.", EVENT) == ValidInterval(EVENT, None)


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"valid_from": "2004-01-01", "valid_to": "2001-01-01"}, "after it ends"),
        ({"valid_from": "2024-02-30"}, "not a date"),
        ({"valid_from": "next year"}, "not a date"),
        ({"valid_to": "2090-01-01"}, "days after the document's event time"),
    ],
)
def test_inconsistent_or_implausible_dates_are_refused(
    fields: dict[str, str], problem: str
) -> None:
    problems = fact_problems(fact("Quinn leads Acme.", **fields), DOC)
    assert [p.kind for p in problems] == ["interval"]
    assert problem in problems[0].message


def test_a_time_named_in_the_text_far_ahead_is_refused() -> None:
    assert kinds(fact("Quinn leads Acme until 2090.")) == ["interval"]


def test_structure_must_match_the_text() -> None:
    good = {"subject": "Quinn", "relation": "leads", "object": "ACME"}
    good["object_type"] = "organization"
    assert kinds(fact("Quinn leads Acme.", **good)) == []
    assert kinds(fact("Quinn leads Acme.", **{**good, "subject": "Jane Roe"})) == ["structure"]
    assert kinds(fact("Quinn leads Acme.", **{**good, "object": "Acme Corp"})) == ["structure"]
    assert kinds(fact("Quinn leads Acme.", **{**good, "object_type": "company"})) == ["structure"]
    partial = {"subject": "Quinn", "relation": None, "object": "Acme", "object_type": None}
    problems = fact_problems(fact("Quinn leads Acme.", **partial), DOC)
    assert [p.kind for p in problems] == ["structure"] and "together" in problems[0].message


def test_the_time_expression_must_be_words_of_the_document() -> None:
    assert kinds(fact("Quinn leads Acme.", time="since  monday")) == []
    assert kinds(fact("Quinn leads Acme.", time="since 2019")) == ["time"]


def test_repair_drops_the_refused_fields_and_keeps_the_fact() -> None:
    bad = fact(
        "Quinn leads Acme until 2090.",
        subject="Jane Roe",
        relation="leads",
        object="Acme",
        object_type="organization",
        time="since 2019",
        valid_from="2019-01-01",
    )
    repaired = repair_fact(bad, fact_problems(bad, DOC))
    assert repaired == fact("Quinn leads Acme until 2090.")
    # Its own words still name an implausible end: valid as if it named no time.
    assert interval_or_default(repaired, EVENT) == ValidInterval(EVENT, None)


def test_the_schema_requires_every_field_and_allows_null() -> None:
    schema = fact_schema(200)
    assert schema["required"] == [
        "text",
        "subject",
        "relation",
        "object",
        "object_type",
        "time",
        "valid_from",
        "valid_to",
    ]
    assert schema["additionalProperties"] is False
    assert {"type": "null"} in schema["properties"]["valid_from"]["anyOf"]
