"""extract_facts.v2, rewrite_fact.v2, classify v3: retried on broken rules, then salvaged."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from factstream.errors import LMOutputInvalid
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks import (
    FactStructure,
    TaskRunner,
    classify_facts_batched,
    extract_new_facts,
    rewrite_false_fact,
)
from factstream.metrics import LMMetrics
from factstream.prompts import classify_fact, classify_facts, extract_facts, rewrite_fact
from factstream.prompts.models import ConstraintBroken, DocumentView, JsonSchema
from factstream.temporal import ValidInterval

EVENT = datetime(2024, 5, 6, tzinfo=UTC)
DOC = DocumentView(text="Parker was CEO of Acme from 2001 to 2004.", timestamp=EVENT)
NULLS = dict.fromkeys(
    ("subject", "relation", "object", "object_type", "time", "valid_from", "valid_to")
)


def facts(*items: dict[str, Any]) -> str:
    return json.dumps({"facts": [{**NULLS, **item} for item in items]})


PARKER = {
    "text": "Parker was CEO of Acme from 2001 to 2004.",
    "subject": "Parker",
    "relation": "was CEO of",
    "object": "Acme",
    "object_type": "organization",
    "time": "from 2001 to 2004",
}


def refused(registry: CollectorRegistry, task: str, reason: str) -> float | None:
    labels = {"task": task, "model": "scripted", "reason": reason}
    return registry.get_sample_value("factstream_lm_refused_total", labels)


async def test_a_dated_past_state_is_valid_in_its_interval_only() -> None:
    lm = ScriptedLM([facts(PARKER)])
    result = await extract_new_facts(TaskRunner(lm), DOC)
    (parker,) = result.value
    assert parker.interval == ValidInterval(
        datetime(2001, 1, 1, tzinfo=UTC), datetime(2005, 1, 1, tzinfo=UTC)
    )
    assert not parker.interval.contains(EVENT)
    assert parker.structure == FactStructure("Parker", "was CEO of", "Acme", "organization")
    (request,) = lm.requests
    assert request.prompt == "extract_facts.v2" and isinstance(request.constraint, JsonSchema)


async def test_an_undated_fact_is_valid_from_the_event_time() -> None:
    lm = ScriptedLM([facts({"text": "Acme makes anvils."})])
    (anvils,) = (await extract_new_facts(TaskRunner(lm), DOC)).value
    assert anvils.interval == ValidInterval(EVENT, None) and anvils.structure is None


async def test_inconsistent_fields_are_dropped_at_once_not_asked_again() -> None:
    # A retry costs a whole generation; what it would fix is a few fields: kept without them.
    registry = CollectorRegistry()
    wrong_subject = {**PARKER, "subject": "Quinn"}
    lm = ScriptedLM([facts(wrong_subject), facts(PARKER)])
    result = await extract_new_facts(TaskRunner(lm, LMMetrics.create(registry)), DOC)
    assert result.attempts == 1 and len(lm.requests) == 1
    (parker,) = result.value
    assert parker.text == PARKER["text"] and parker.structure is None
    assert refused(registry, "extract_facts", "structure") == 1


async def test_texts_that_break_the_rules_are_still_sent_back_with_the_reason() -> None:
    lm = ScriptedLM([facts({"text": ""}), facts(PARKER)])
    result = await extract_new_facts(TaskRunner(lm), DOC)
    assert result.attempts == 2 and result.value[0].structure is not None
    assert "invalid" in lm.requests[1].messages[-1].content


async def test_refused_fields_are_dropped_and_counted() -> None:
    registry = CollectorRegistry()
    broken = {
        **PARKER,
        "subject": "Quinn",  # not in the text
        "time": "from 1999 to 2000",  # not in the document
    }
    implausible = {"text": "Acme makes anvils.", "valid_from": "2099-01-01"}
    lm = ScriptedLM([facts(broken, implausible)] * 3)
    result = await extract_new_facts(TaskRunner(lm, LMMetrics.create(registry)), DOC)
    assert result.attempts == 1
    parker, anvils = result.value
    # Kept: no structure, the interval from the text's own words.
    assert parker.structure is None
    assert parker.interval == ValidInterval(
        datetime(2001, 1, 1, tzinfo=UTC), datetime(2005, 1, 1, tzinfo=UTC)
    )
    # Kept: the implausible date refused, valid from the event time.
    assert anvils.interval == ValidInterval(EVENT, None)
    for reason in ("structure", "time", "interval"):
        assert refused(registry, "extract_facts", reason) == 1


async def test_too_many_facts_is_not_salvaged() -> None:
    lm = ScriptedLM([facts(*[{"text": f"Fact {i}."} for i in range(3)])] * 2)
    with pytest.raises(LMOutputInvalid, match="3 facts, at most 2"):
        await extract_new_facts(TaskRunner(lm, attempts=2), DOC, max_facts=2)


async def test_a_structured_rewrite_is_told_why_the_fact_is_false() -> None:
    quinn = DocumentView(text="Quinn succeeded Parker as CEO of Acme on Monday.", timestamp=EVENT)
    answer = {**NULLS, "text": "Quinn is CEO of Acme.", "time": "on Monday"}
    lm = ScriptedLM([json.dumps({"rewrite": answer}), json.dumps({"rewrite": None})])
    runner = TaskRunner(lm)
    result = await rewrite_false_fact(runner, quinn, "Parker is CEO of Acme.", change="update")
    assert result.value is not None and result.value.text == "Quinn is CEO of Acme."
    assert result.value.interval == ValidInterval(datetime(2024, 4, 29, tzinfo=UTC), None)
    assert "The world changed" in lm.requests[0].messages[-1].content
    none = await rewrite_false_fact(runner, quinn, "Parker is CEO.", change="correction")
    assert none.value is None
    assert "was never true" in lm.requests[1].messages[-1].content


def test_a_rewrite_whose_time_is_not_in_the_document_is_refused() -> None:
    ctx = rewrite_fact.RewriteFactContext(document=DOC, fact="Parker is CEO of Acme.")
    answer = rewrite_fact.StructuredRewrite.model_validate(
        {"rewrite": {**NULLS, "text": "Parker was CEO.", "time": "in 1990"}}
    )
    with pytest.raises(ConstraintBroken, match="not words of the document"):
        rewrite_fact.V2.check(ctx, answer)


async def test_classify_v3_tells_outdated_from_wrong() -> None:
    labels = '{"labels": [{"fact": 0, "label": "outdated"}, {"fact": 1, "label": "wrong"}]}'
    lm = ScriptedLM([labels])
    result = await classify_facts_batched(TaskRunner(lm), DOC, ["Parker is CEO.", "Acme is old."])
    assert result.value == ["outdated", "wrong"]
    schema = lm.requests[0].constraint
    assert isinstance(schema, JsonSchema)
    entry = schema.schema["properties"]["labels"]["prefixItems"][0]
    assert entry["properties"]["label"]["enum"] == list(classify_facts.LABELS_V3)


def test_each_classify_version_refuses_the_labels_of_the_others() -> None:
    ctx = classify_facts.ClassifyFactsContext(document=DOC, facts=("Parker is CEO.",))
    old = classify_facts.FactLabels.model_validate({"labels": [{"fact": 0, "label": "outdated"}]})
    with pytest.raises(ConstraintBroken, match="not among"):
        classify_facts.V1.check(ctx, old)
    new = classify_facts.FactLabels.model_validate({"labels": [{"fact": 0, "label": "make_false"}]})
    with pytest.raises(ConstraintBroken, match="not among"):
        classify_facts.V3.check(ctx, new)
    one = classify_fact.ClassifyFactContext(document=DOC, fact="Parker is CEO.")
    with pytest.raises(ConstraintBroken, match="not among"):
        classify_fact.V3.check(one, classify_fact.FactJudgement(answer="make_false"))
    classify_fact.V3.check(one, classify_fact.FactJudgement(answer="outdated"))


@pytest.mark.parametrize(
    "messages",
    [
        extract_facts.V2.messages(extract_facts.ExtractFactsContext(document=DOC)),
        rewrite_fact.V2.messages(rewrite_fact.RewriteFactContext(document=DOC, fact="A fact.")),
        classify_facts.V3.messages(
            classify_facts.ClassifyFactsContext(document=DOC, facts=("A fact.",))
        ),
    ],
)
def test_new_prompts_have_no_worked_example_to_copy(messages: list[Any]) -> None:
    # A small model copies an example's entities into its facts: rules and schema only.
    assert [m.role for m in messages] == ["system", "user"]
    instructions = messages[0].content
    assert not any(name in instructions for name in ("Jane", "Roe", "Acme", "John", "Doe"))
