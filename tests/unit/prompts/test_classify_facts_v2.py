"""classify_facts.v2: the compact label list parses into v1's FactLabels and is checked alike."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from factstream.prompts import classify_facts
from factstream.prompts.models import ConstraintBroken, DocumentView, JsonSchema

CTX = classify_facts.ClassifyFactsContext(
    document=DocumentView(
        text="Lawler went to Congress.", timestamp=datetime(2023, 1, 3, tzinfo=UTC)
    ),
    facts=(
        "Lawler is in the State Assembly.",
        "Lawler lives in Pearl River.",
        "Paris is in France.",
    ),
)


def test_v2_answers_parse_into_labels_by_index() -> None:
    parsed = classify_facts.V2.parse_text('{"labels": ["make_false", "reinforce", "no_change"]}')
    classify_facts.V2.check(CTX, parsed)
    assert classify_facts.labels_in_order(parsed) == ["make_false", "reinforce", "no_change"]


def test_v2_schema_fixes_the_number_of_labels() -> None:
    schema = classify_facts.V2.constraint(CTX)
    assert isinstance(schema, JsonSchema)
    labels = schema.schema["properties"]["labels"]
    assert labels["minItems"] == labels["maxItems"] == 3
    assert labels["items"]["enum"] == list(classify_facts.LABELS)


def test_v2_rejects_a_wrong_count_or_an_unknown_label() -> None:
    short = classify_facts.V2.parse_text('{"labels": ["reinforce", "no_change"]}')
    with pytest.raises(ConstraintBroken, match="missing \\[2\\]"):
        classify_facts.V2.check(CTX, short)
    with pytest.raises(ValidationError):
        classify_facts.V2.parse_text('{"labels": ["reinforce", "maybe", "no_change"]}')


def test_v2_lists_the_facts_numbered_and_asks_for_all_of_them() -> None:
    user = classify_facts.V2.messages(CTX)[-1].content
    assert "0. Lawler is in the State Assembly.\n1. Lawler lives" in user
    assert user.endswith("The 3 labels, in order:")
