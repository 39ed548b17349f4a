"""Raw control characters inside an answer's JSON strings are escaped, not asked about again;
every other defect is still retried; invalid answers are counted by task and kind."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from prometheus_client import CollectorRegistry
from pydantic import BaseModel, ValidationError

from factstream.errors import LMOutputInvalid
from factstream.lm.base import Completion, Usage
from factstream.lm.budget import longest_constrained
from factstream.lm.fake import ScriptedLM
from factstream.lm.repair import escape_control_characters
from factstream.lm.tasks import TaskRunner, extract_new_facts
from factstream.metrics import LMMetrics
from factstream.prompts import extract_facts
from factstream.prompts.models import DocumentView

DOC = DocumentView(
    text="Jane Roe became CEO of Acme on Monday, replacing John Doe.",
    timestamp=datetime(2024, 3, 4, tzinfo=UTC),
)
# SmolLM2 under llama-cpp-python's own schema grammar: a raw newline inside a string.
RAW = '{"facts": ["Jane Roe is the CEO\nof Acme."]}'


class Facts(BaseModel):
    facts: list[str]


def test_the_exact_parse_failure_is_repaired() -> None:
    with pytest.raises(ValidationError, match=r"control character \(\\u0000-\\u001F\) found"):
        Facts.model_validate_json(RAW)
    repaired = escape_control_characters(RAW)
    assert repaired == '{"facts": ["Jane Roe is the CEO\\nof Acme."]}'
    assert Facts.model_validate_json(repaired).facts == ["Jane Roe is the CEO\nof Acme."]


def test_only_control_characters_inside_strings_are_escaped() -> None:
    text = '{\n\t"a": "x\ty\x00z \\" \x1f",\r\n "b": "\\\\"}'
    repaired = escape_control_characters(text)
    assert repaired == '{\n\t"a": "x\\ty\\u0000z \\" \\u001f",\r\n "b": "\\\\"}'
    assert json.loads(repaired) == {"a": 'x\ty\x00z " \x1f', "b": "\\"}
    assert escape_control_characters('{"a": "clean"}\n') is None  # nothing to repair


def _counts(registry: CollectorRegistry, name: str, kind: str) -> float | None:
    labels = {"task": "extract_facts", "model": "scripted", "kind": kind}
    return registry.get_sample_value(name, labels)


async def test_the_runner_repairs_at_the_first_attempt_and_counts_it() -> None:
    registry = CollectorRegistry()
    lm = ScriptedLM([RAW])  # one answer scripted: a second request would fail the test
    runner = TaskRunner(lm, LMMetrics.create(registry))
    result = await extract_new_facts(runner, DOC, prompt="extract_facts.v1")
    assert [f.text for f in result.value] == ["Jane Roe is the CEO\nof Acme."]
    assert (result.attempts, len(lm.requests)) == (1, 1)
    assert _counts(registry, "factstream_lm_repaired_total", "control_characters") == 1
    assert _counts(registry, "factstream_lm_invalid_outputs_total", "json") is None


async def test_other_defects_are_asked_again_and_counted_by_kind() -> None:
    registry = CollectorRegistry()
    lm = ScriptedLM(
        [
            '{"facts": ["Jane Roe is CEO\nof Acme.",]}',  # repaired, still not JSON
            '{"facts": "Jane Roe is CEO of Acme."}',  # JSON of the wrong shape
            '{"facts": [" "]}',  # breaks the prompt's check (blank)
        ]
    )
    runner = TaskRunner(lm, LMMetrics.create(registry), attempts=3)
    with pytest.raises(LMOutputInvalid):
        await extract_new_facts(runner, DOC, prompt="extract_facts.v1")
    assert len(lm.requests) == 3
    for kind in ("json", "schema", "check"):
        assert _counts(registry, "factstream_lm_invalid_outputs_total", kind) == 1
    assert _counts(registry, "factstream_lm_repaired_total", "control_characters") is None


async def test_a_cut_off_answer_is_counted_and_asked_again() -> None:
    # A server that ignores the grammar may still cut an answer off: it is asked again, with
    # the budget that already admits the longest answer the schema allows.
    registry = CollectorRegistry()
    cut = Completion('{"facts": ["Jane Roe is', Usage(10, 5), "scripted", "length")
    lm = ScriptedLM([cut, '{"facts": ["Jane Roe is the CEO of Acme."]}'])
    runner = TaskRunner(lm, LMMetrics.create(registry))
    result = await extract_new_facts(runner, DOC, prompt="extract_facts.v1")
    assert result.attempts == 2
    first, second = (r.max_tokens for r in lm.requests)
    ctx = extract_facts.ExtractFactsContext(document=DOC)
    assert second == first == longest_constrained(extract_facts.V1.constraint(ctx)) + 1
    assert _counts(registry, "factstream_lm_invalid_outputs_total", "cut_off") == 1
    assert "cut off at the token limit" in lm.requests[1].messages[-1].content
