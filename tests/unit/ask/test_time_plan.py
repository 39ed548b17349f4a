"""The LM plans what the time rules cannot ("when Smith was mayor"), anchored on stored facts.

A scripted LM gives the plans; the dates must come from the anchor fact's stored interval,
and every failure must leave the rules' valid time in place, saying why.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from fixtures.bitemporal import edit
from prometheus_client import CollectorRegistry

from factstream.api.schemas import ValidTimeOut
from factstream.ask.query import AskRequest, QueryEngine
from factstream.ask.time_plan import TimePlanner, _without_event, has_temporal_cue
from factstream.ask.valid_time import ValidTimeSource, question_valid_time
from factstream.config import ApiSettings
from factstream.edit.materializer import Materializer
from factstream.embed.fake import HashingEmbedder
from factstream.errors import LMUnavailable
from factstream.lm.fake import Reply, ScriptedLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.metrics import QueryMetrics
from factstream.prompts.models import ConstraintBroken
from factstream.prompts.plan_time import PLAN_TIME_V1, PlanTimeContext, TimePlan, event_span
from factstream.store.memory import InMemoryFactStore
from factstream.temporal.intervals import ValidInterval, since, until
from factstream.topics.records import EditOp, fact_id_for

NOW = datetime(2025, 6, 1, tzinfo=UTC)
Y = {y: datetime(y, 1, 1, tzinfo=UTC) for y in range(1990, 2026)}
MAYOR = "Smith was the mayor of Springfield."
JONES = "Jones chaired the city council."
BROWN = "Brown chairs the city council."
GREEN = "Green chairs the city council."
FOUNDED = "Acme opened its Springfield plant."
QUESTION = "Who chaired the city council when Smith was the mayor of Springfield?"
ANSWER = '{"reasoning": "r", "answer": "Jones"}'


def plan(scope: str, event: str = "") -> str:
    return json.dumps({"scope": scope, "event": event})


@pytest.fixture
async def store() -> InMemoryFactStore:
    """Smith mayor 2001-2005; Jones chair 2000-2004, Brown 2004-2012, Green from 2012."""
    store = InMemoryFactStore()
    materializer = Materializer(store, HashingEmbedder())
    facts = [
        (MAYOR, Y[2001], Y[2005]),
        (JONES, Y[2000], Y[2004]),
        (BROWN, Y[2004], Y[2012]),
        (GREEN, Y[2012], None),
        (FOUNDED, Y[2015], None),
    ]
    batch = [
        edit("d1", pos, len(facts), EditOp.ADD, text, Y[2020], valid_from=a, valid_to=b)
        for pos, (text, a, b) in enumerate(facts)
    ]
    await materializer.apply(batch)
    return store


def engine_for(
    store: InMemoryFactStore, replies: list[Reply], **settings: object
) -> tuple[QueryEngine, ScriptedLM, QueryMetrics]:
    lm = ScriptedLM(replies)
    metrics = QueryMetrics.create(CollectorRegistry())
    api = ApiSettings(min_similarity=-1.0, time_plan_min_similarity=0.5, **settings)  # type: ignore[arg-type]
    engine = QueryEngine(store, HashingEmbedder(), TaskRunner(lm), api, alpha=1.0, metrics=metrics)
    return engine, lm, metrics


def plans(metrics: QueryMetrics) -> dict[str, float]:
    return {
        s.labels["outcome"]: s.value
        for family in metrics.time_plans.collect()
        for s in family.samples
        if s.name.endswith("_total")
    }


async def test_during_an_event_is_the_anchor_facts_stored_interval(
    store: InMemoryFactStore,
) -> None:
    engine, lm, metrics = engine_for(
        store, [plan("during", "Smith was the mayor of Springfield"), ANSWER]
    )
    result = await engine.ask(AskRequest(QUESTION, "desk"))
    valid = result.valid_time
    assert valid is not None and valid.source is ValidTimeSource.PLAN
    assert valid.interval == ValidInterval(Y[2001], Y[2005])  # the fact's, not the LM's
    assert valid.search_text == "Who chaired the city council?"
    texts = {f.fact.text for f in result.facts}
    assert JONES in texts and BROWN in texts and GREEN not in texts and FOUNDED not in texts
    assert lm.requests[0].prompt == "plan_time.v1" and lm.requests[0].constraint is not None
    assert "plan" in result.timings
    record = result.to_record("q1", "desk")
    assert record.schema_version == 5 and record.valid_time_source is ValidTimeSource.PLAN
    assert record.time_plan is not None and record.time_plan.outcome == "anchored"
    assert record.time_plan.anchor_fact_id == fact_id_for("desk", "d1", 0)
    assert record.valid_time is not None and record.valid_time.start == Y[2001]
    shown = ValidTimeOut.of(valid)
    assert shown.source == "plan" and shown.plan is not None
    assert MAYOR in shown.description and "2001-01-01 to 2005-01-01" in shown.description
    assert plans(metrics) == {"anchored": 1.0}


@pytest.mark.parametrize(
    ("scope", "expected"),
    [("before", until(Y[2001])), ("after", since(Y[2005]))],
)
async def test_before_and_after_an_event_end_or_start_at_its_interval(
    store: InMemoryFactStore, scope: str, expected: ValidInterval
) -> None:
    engine, _, _ = engine_for(store, [plan(scope, "Smith was the mayor of Springfield")])
    question = f"Who chaired the city council {scope} Smith was the mayor of Springfield?"
    retrieval = await engine.retrieve_timed(AskRequest(question, "desk"))
    assert retrieval.valid_time.source is ValidTimeSource.PLAN
    assert retrieval.valid_time.interval == expected


async def test_after_an_event_that_still_holds_falls_back_and_says_why(
    store: InMemoryFactStore,
) -> None:
    engine, _, metrics = engine_for(store, [plan("after", "Green chairs the city council")])
    question = "Where did Smith live after Green chairs the city council?"
    valid = (await engine.retrieve_timed(AskRequest(question, "desk"))).valid_time
    assert valid.source is ValidTimeSource.CURRENT and valid.plan is not None
    assert valid.plan.outcome == "unbounded" and "no known end" in (valid.plan.reason or "")
    assert valid.plan.anchor_text == GREEN
    assert plans(metrics) == {"unbounded": 1.0}


async def test_an_event_no_fact_states_leaves_the_rules_time(store: InMemoryFactStore) -> None:
    engine, _, metrics = engine_for(store, [plan("during", "the volcano erupted")])
    question = "Who chaired the city council when the volcano erupted?"
    valid = (await engine.retrieve_timed(AskRequest(question, "desk"))).valid_time
    assert valid.source is ValidTimeSource.CURRENT and valid.interval is not None
    assert valid.plan is not None and valid.plan.outcome == "no_anchor"
    assert plans(metrics) == {"no_anchor": 1.0}


async def test_an_invented_event_is_refused_and_the_rules_time_stays(
    store: InMemoryFactStore,
) -> None:
    # The LM names an event the question does not (with a date): every attempt is refused.
    made_up = plan("during", "Smith was mayor from 2001 to 2005")
    engine, lm, metrics = engine_for(store, [made_up] * 3)
    valid = (await engine.retrieve_timed(AskRequest(QUESTION, "desk"))).valid_time
    assert valid.source is ValidTimeSource.CURRENT and valid.interval == since(valid.interval.start)  # type: ignore[union-attr]
    assert valid.plan is not None and valid.plan.outcome == "invalid"
    assert "not words of the question" in (valid.plan.reason or "")
    assert len(lm.requests) == 3
    assert plans(metrics) == {"invalid": 1.0}


async def test_an_lm_outage_falls_back_to_the_rules(store: InMemoryFactStore) -> None:
    engine, _, metrics = engine_for(store, [LMUnavailable("http://lm", "down")])
    valid = (await engine.retrieve_timed(AskRequest(QUESTION, "desk"))).valid_time
    assert valid.source is ValidTimeSource.CURRENT
    assert valid.plan is not None and valid.plan.outcome == "lm_error"
    assert plans(metrics) == {"lm_error": 1.0}


async def test_former_reads_everything_up_to_now_and_no_scope_changes_nothing(
    store: InMemoryFactStore,
) -> None:
    engine, _, metrics = engine_for(store, [plan("past"), plan("none")])
    former = await engine.retrieve_timed(
        AskRequest("Who was the former chair of the city council?", "desk", as_of=NOW)
    )
    assert former.valid_time.source is ValidTimeSource.PLAN
    assert former.valid_time.interval == until(NOW)
    assert JONES in {f.fact.text for f in former.facts}  # closed facts count again
    when = await engine.retrieve_timed(AskRequest("When did Acme open its plant?", "desk"))
    assert when.valid_time.source is ValidTimeSource.CURRENT
    assert when.valid_time.plan is not None and when.valid_time.plan.outcome == "no_scope"
    assert plans(metrics) == {"past": 1.0, "no_scope": 1.0}


async def test_no_plan_without_a_cue_when_the_rules_read_a_time_or_when_switched_off(
    store: InMemoryFactStore,
) -> None:
    engine, lm, metrics = engine_for(store, [])
    for question in (
        "Who chairs the city council?",
        "Who chaired the city council in 2003, when Smith was the mayor of Springfield?",
    ):
        await engine.retrieve_timed(AskRequest(question, "desk"))
    await engine.retrieve_timed(AskRequest(QUESTION, "desk", valid=until(Y[2001])))
    off, off_lm, _ = engine_for(store, [], time_plan=False)
    valid = (await off.retrieve_timed(AskRequest(QUESTION, "desk"))).valid_time
    assert valid.source is ValidTimeSource.CURRENT and valid.plan is None
    assert lm.requests == [] and off_lm.requests == [] and plans(metrics) == {}


def test_the_cue_and_the_event_span() -> None:
    assert has_temporal_cue(QUESTION) and has_temporal_cue("Who was the ex-chair?")
    assert not has_temporal_cue("Who chairs the council?")
    span = (QUESTION.index("Smith"), QUESTION.index("?"))
    assert event_span(QUESTION, "smith was the MAYOR of springfield") == span
    # Words the question has, in its order, a few of its own words between them.
    assert event_span(QUESTION, "Smith was mayor") == (QUESTION.index("Smith"), span[1] - 15)
    assert event_span(QUESTION, "Smith was mayor in 2001") is None  # 'in 2001' is not its
    assert event_span(QUESTION, "mayor Smith") is None  # not in its order
    assert event_span(QUESTION, "Smith of Springfield") is None  # too far apart
    assert _without_event(QUESTION, "Smith was the mayor of Springfield") == (
        "Who chaired the city council?"
    )
    assert _without_event("While Ann lived in Rome, who led?", "Ann lived in Rome") == "who led?"


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (TimePlan(scope="during", event=""), "needs the event"),
        (TimePlan(scope="before", event="Smith was mayor in 2001"), "not words of the question"),
        (TimePlan(scope="during", event=QUESTION.rstrip("?")), "whole question"),
    ],
)
def test_the_prompt_check_refuses_events_not_in_the_question(
    answer: TimePlan, problem: str
) -> None:
    with pytest.raises(ConstraintBroken, match=problem):
        PLAN_TIME_V1.check(PlanTimeContext(question=QUESTION), answer)
    PLAN_TIME_V1.check(PlanTimeContext(question=QUESTION), TimePlan(scope="past", event="x"))


async def test_the_planner_alone_keeps_a_request_or_question_time() -> None:
    lm = ScriptedLM([])
    planner = TimePlanner(InMemoryFactStore(), HashingEmbedder(), TaskRunner(lm), alpha=1.0)
    rule = question_valid_time("Who led in 2019, before the war?", valid=None, as_of=None, now=NOW)
    assert await planner.refine("desk", rule, None, NOW) is rule and lm.requests == []
