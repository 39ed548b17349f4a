"""Time plans through the real llama.cpp server (SmolLM2-135M), anchored in real Weaviate.

Questions whose time the rules cannot read ("when Smith was the mayor") go to the LM's
``plan_time.v1``; whatever the small model answers, the valid time used must be either the
stored interval of the fact it anchored on (with the scope's end or start) or the rules'
own, with the reason the plan was not used; never a date of the LM's. Outcomes are printed
(``-s``) and counted in ``factstream_time_plans_total``.
"""

from __future__ import annotations

from datetime import UTC, datetime

from fixtures.bitemporal import edit
from fixtures.llama_query import LlamaQuery

from factstream.ask.query import AskRequest
from factstream.ask.valid_time import ValidTimeSource
from factstream.config import ApiSettings
from factstream.edit.materializer import Materializer
from factstream.store.rules import valid_interval
from factstream.store.weaviate_store import WeaviateFactStore
from factstream.temporal.intervals import ValidInterval, since, until
from factstream.topics.records import EditOp

NS = "timeplan"
Y = {y: datetime(y, 1, 1, tzinfo=UTC) for y in (2000, 2001, 2004, 2005, 2012, 2020)}
FACTS = [
    ("Smith was the mayor of Springfield.", Y[2001], Y[2005]),
    ("Jones chaired the Springfield city council.", Y[2000], Y[2004]),
    ("Brown chaired the Springfield city council.", Y[2004], Y[2012]),
    ("Green chairs the Springfield city council.", Y[2012], None),
]
QUESTIONS = [
    "Who chaired the Springfield city council when Smith was the mayor of Springfield?",
    "Who chaired the Springfield city council before Smith was the mayor of Springfield?",
    "Who was the former chair of the Springfield city council?",
]
OUTCOMES = {"anchored", "past", "no_scope", "no_anchor", "unbounded", "invalid", "lm_error"}


async def test_a_plan_uses_a_stored_interval_or_falls_back_saying_why(
    llama_query: LlamaQuery, weaviate_store: WeaviateFactStore
) -> None:
    batch = [
        edit("d1", pos, len(FACTS), EditOp.ADD, text, Y[2020], namespace=NS, **valid)
        for pos, (text, start, end) in enumerate(FACTS)
        for valid in [{"valid_from": start, "valid_to": end}]
    ]
    await Materializer(weaviate_store, llama_query.embedder).apply(batch)
    engine = llama_query.engine(weaviate_store, ApiSettings())
    now = datetime.now(UTC)
    for question in QUESTIONS:
        valid = (await engine.retrieve_timed(AskRequest(question, NS, as_of=now))).valid_time
        plan = valid.plan
        assert plan is not None and plan.outcome in OUTCOMES, question
        print(f"{question!r}: {plan.outcome} {plan.scope} {plan.event!r} -> {valid.describe()}")
        if valid.source is ValidTimeSource.PLAN and plan.anchor_fact_id is not None:
            anchor = (await weaviate_store.get(NS, [plan.anchor_fact_id]))[plan.anchor_fact_id]
            held = valid_interval(anchor)
            expected = {
                "during": held,
                "before": until(held.start) if held.start else None,
                "after": ValidInterval(held.end, None) if held.end else None,
            }[str(plan.scope)]
            assert valid.interval == expected, (question, plan)
        elif valid.source is ValidTimeSource.PLAN:
            assert plan.outcome == "past" and valid.interval == until(now)
        else:
            assert valid.source is ValidTimeSource.CURRENT and valid.interval == since(now)
            assert plan.reason, plan
    counted = sum(
        llama_query.registry.get_sample_value("factstream_time_plans_total", {"outcome": o}) or 0.0
        for o in OUTCOMES
    )
    assert counted == len(QUESTIONS)
    asked = sum(
        sample.value
        for family in llama_query.registry.collect()
        for sample in family.samples
        if sample.name == "factstream_lm_requests_total" and sample.labels["task"] == "plan_time"
    )
    assert asked >= len(QUESTIONS)  # every plan reached the server (retries may add more)
