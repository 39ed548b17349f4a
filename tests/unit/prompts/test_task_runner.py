"""Typed tasks over a scripted LM: parsing, bounded retries of invalid output, usage, batching."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from factstream.errors import LMOutputInvalid
from factstream.lm.base import CompletionRequest, Usage
from factstream.lm.cache import CachingLM, SQLiteLMCache
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks import (
    TaskRunner,
    answer_choice,
    classify_facts_batched,
    classify_facts_per_fact,
    extract_new_facts,
    rewrite_false_fact,
)
from factstream.metrics import LMMetrics
from factstream.prompts.answer import FactWithHistory
from factstream.prompts.models import Choice, DocumentView
from factstream.temporal import ValidInterval

DOC = DocumentView(text="Jane Roe became CEO of Acme.", timestamp=datetime(2024, 3, 4, tzinfo=UTC))
FACTS = ["John Doe is CEO of Acme.", "Acme makes anvils."]
V1 = "classify_facts.v1"  # these tests answer in v1's format
GOOD = '{"labels": [{"fact": 0, "label": "make_false"}, {"fact": 1, "label": "no_change"}]}'


async def test_batched_classification_is_one_call() -> None:
    lm = ScriptedLM([GOOD])
    result = await classify_facts_batched(TaskRunner(lm), DOC, FACTS, prompt=V1)
    assert result.value == ["make_false", "no_change"]
    assert (result.prompt, result.calls, result.attempts) == ("classify_facts.v1", 1, 1)
    assert result.usage.completion_tokens > 0
    (req,) = lm.requests
    assert req.task == "classify_facts" and req.prompt == "classify_facts.v1"


async def test_invalid_output_is_retried_with_the_reason_then_accepted() -> None:
    registry = CollectorRegistry()
    metrics = LMMetrics.create(registry)
    lm = ScriptedLM(
        [
            "not json",
            '{"labels": [{"fact": 0, "label": "make_false"}]}',  # fact 1 missing
            GOOD,
        ]
    )
    result = await classify_facts_batched(TaskRunner(lm, metrics), DOC, FACTS, prompt=V1)
    assert result.value == ["make_false", "no_change"]
    assert result.attempts == 3
    # Usage of every attempt counts.
    assert result.usage.prompt_tokens == sum(_words(r)[0] for r in lm.requests)
    retry_msgs = lm.requests[2].messages
    assert retry_msgs[-1].role == "user" and "missing [1]" in retry_msgs[-1].content
    assert retry_msgs[-2].role == "assistant"
    assert (
        registry.get_sample_value(
            "factstream_lm_retries_total",
            {"task": "classify_facts", "model": "scripted", "reason": "invalid_output"},
        )
        == 2
    )


def _words(req: CompletionRequest) -> tuple[int, int]:
    return sum(len(m.content.split()) for m in req.messages), 0


async def test_invalid_output_every_time_raises_never_guesses() -> None:
    lm = ScriptedLM(['{"labels": []}'] * 3)
    with pytest.raises(LMOutputInvalid) as info:
        await classify_facts_batched(TaskRunner(lm, attempts=3), DOC, FACTS, prompt=V1)
    assert info.value.attempts == 3 and info.value.prompt == "classify_facts.v1"
    assert len(lm.requests) == 3


async def test_per_fact_classification_is_one_call_per_fact() -> None:
    def judge(req: CompletionRequest) -> str:
        label = "make_false" if "John Doe" in req.messages[-1].content else "no_change"
        return f'{{"reasoning": "because", "answer": "{label}"}}'

    lm = ScriptedLM([judge, judge])
    result = await classify_facts_per_fact(TaskRunner(lm), DOC, FACTS, prompt="classify_fact.v1")
    assert result.value == ["make_false", "no_change"]
    assert result.calls == 2 and len(lm.requests) == 2
    assert result.usage.prompt_tokens == sum(_words(r)[0] for r in lm.requests)


async def test_per_fact_v2_sends_a_choice_constraint() -> None:
    lm = ScriptedLM(["reinforce", "no_change"])
    result = await classify_facts_per_fact(TaskRunner(lm), DOC, FACTS, prompt="classify_fact.v2")
    assert sorted(result.value) == ["no_change", "reinforce"]
    assert all(isinstance(r.constraint, Choice) for r in lm.requests)


async def test_rewrite_extract_answer() -> None:
    lm = ScriptedLM(
        [
            '{"rewrite": " Jane Roe is CEO of Acme. "}',
            '{"rewrite": null}',
            '{"facts": ["Jane Roe is CEO of Acme.", "Jane Roe is CEO of Acme."]}',
            '{"reasoning": "r", "answer": "Jane Roe"}',
        ]
    )
    runner = TaskRunner(lm)
    rewritten = await rewrite_false_fact(runner, DOC, FACTS[0], FACTS[1:], prompt="rewrite_fact.v1")
    assert rewritten.value is not None and rewritten.value.text == "Jane Roe is CEO of Acme."
    none = await rewrite_false_fact(runner, DOC, FACTS[1], prompt="rewrite_fact.v1")
    assert none.value is None
    extracted = await extract_new_facts(runner, DOC, prompt="extract_facts.v1")
    assert [f.text for f in extracted.value] == ["Jane Roe is CEO of Acme."]
    # v1 facts get the interval their words name; these name none: from the event time.
    assert extracted.value[0].interval == ValidInterval(DOC.timestamp, None)
    got = await answer_choice(
        runner, "Who is CEO of Acme?", ["Jane Roe", "John Doe"], [FactWithHistory(text=FACTS[0])]
    )
    assert got.value.answer == "Jane Roe"


async def test_answer_outside_the_choices_is_rejected() -> None:
    lm = ScriptedLM(['{"reasoning": "r", "answer": "Someone else"}'] * 2)
    with pytest.raises(LMOutputInvalid, match="not one of"):
        await answer_choice(TaskRunner(lm, attempts=2), "Who?", ["A", "B"], [])


async def test_cached_answers_cost_no_tokens_now(tmp_path: Path) -> None:
    lm = CachingLM(ScriptedLM([GOOD]), SQLiteLMCache(tmp_path / "c.sqlite"))
    runner = TaskRunner(lm)
    first = await classify_facts_batched(runner, DOC, FACTS, prompt=V1)
    again = await classify_facts_batched(runner, DOC, FACTS, prompt=V1)
    assert again.value == first.value
    assert again.usage == Usage() and again.cached_usage == first.usage
    await lm.aclose()


async def test_cache_can_be_switched_off_per_call(tmp_path: Path) -> None:
    inner = ScriptedLM([GOOD, GOOD])
    lm = CachingLM(inner, SQLiteLMCache(tmp_path / "c.sqlite"))
    runner = TaskRunner(lm)
    await classify_facts_batched(runner, DOC, FACTS, prompt=V1, use_cache=False)
    await classify_facts_batched(runner, DOC, FACTS, prompt=V1, use_cache=False)
    assert len(inner.requests) == 2
    await lm.aclose()


async def test_streamed_answers_come_piece_by_piece_with_their_attempt() -> None:
    bad, good = '{"reasoning": "r", "answer": "Paris"}', '{"reasoning": "r", "answer": "Oslo"}'
    lm = ScriptedLM([bad, good])
    pieces: list[tuple[int, str]] = []

    async def sink(attempt: int, text: str) -> None:
        pieces.append((attempt, text))

    facts = [FactWithHistory(text="The capital is Oslo.")]
    result = await answer_choice(
        TaskRunner(lm), "Capital?", ["Oslo", "Bergen"], facts, on_token=sink
    )
    assert result.value.answer == "Oslo" and result.attempts == 2
    assert "".join(text for attempt, text in pieces if attempt == 1) == bad
    assert "".join(text for attempt, text in pieces if attempt == 2) == good
    assert len(pieces) > 2  # word by word, not one piece per answer


async def test_a_cached_answer_streams_as_one_piece(tmp_path: Path) -> None:
    reply = '{"reasoning": "r", "answer": "Oslo"}'
    lm = CachingLM(ScriptedLM([reply]), SQLiteLMCache(tmp_path / "c.sqlite"))
    runs: list[list[tuple[int, str]]] = [[], []]
    facts = [FactWithHistory(text="The capital is Oslo.")]
    for seen in runs:

        async def sink(attempt: int, text: str, seen: list[tuple[int, str]] = seen) -> None:
            seen.append((attempt, text))

        result = await answer_choice(
            TaskRunner(lm), "Capital?", ["Oslo", "Bergen"], facts, on_token=sink
        )
        assert result.value.answer == "Oslo"
    await lm.aclose()
    assert "".join(text for _, text in runs[0]) == reply and len(runs[0]) > 1  # the LM
    assert runs[1] == [(1, reply)]  # the cache
