"""Multi-hop answering and the self-check, on the in-memory store with a scripted LM."""

from __future__ import annotations

import json
from datetime import timedelta

from fixtures.chain_world import BOTH, NS, T0, TRIPLES, chain_store
from prometheus_client import CollectorRegistry

from factstream.access import KeyTable
from factstream.agents.query import QuestionHandler
from factstream.ask.query import AskRequest, QueryEngine
from factstream.config import ApiSettings
from factstream.embed.fake import HashingEmbedder
from factstream.lm.base import CompletionRequest
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.metrics import QueryMetrics
from factstream.temporal.intervals import at
from factstream.topics.records import Question


def _answer_from_prompt(request: CompletionRequest) -> str:
    """The scripted answerer: the chief executive its facts name (none: "unknown")."""
    shown = request.messages[-1].content.split("<question>")[0]
    names = [n for n in ("Bo Lind", "Cy Ode") if n in shown]
    answer = names[0] if len(names) == 1 else "unknown"
    return json.dumps({"reasoning": "from the facts", "answer": answer})


def _verdict(supported: bool) -> str:
    return json.dumps({"reason": "checked", "supported": supported})


async def _engine(lm: ScriptedLM, **settings: object) -> tuple[QueryEngine, QueryMetrics]:
    store, embedder = await chain_store(), HashingEmbedder()
    metrics = QueryMetrics.create(CollectorRegistry())
    api = ApiSettings(min_similarity=-1.0, time_plan=False, **settings)  # type: ignore[arg-type]
    engine = QueryEngine(store, embedder, TaskRunner(lm), api, alpha=0.5, metrics=metrics)
    return engine, metrics


async def test_multi_hop_follows_the_chain_at_the_asked_time() -> None:
    lm = ScriptedLM([_answer_from_prompt] * 2)
    engine, metrics = await _engine(lm)
    now = await engine.ask(AskRequest(BOTH, NS, mode="multi_hop"))
    assert now.mode == "multi_hop" and now.answer == "Cy Ode"
    assert [(h.entity, h.relation, h.answer) for h in now.hops] == [
        ("Ana Silva", "employer", "Orbit"),
        ("Orbit", "chief executive", "Cy Ode"),
    ]
    # Pruned: the chain's facts only (Ana's residence and Vela's chief executive left out).
    assert [f.fact.text for f in now.facts] == [TRIPLES[4][2], TRIPLES[2][2]]
    assert now.hops[0].pruned >= 1 and "hops" in now.timings
    then = await engine.ask(
        AskRequest(BOTH, NS, valid=at(T0 + timedelta(days=10)), mode="multi_hop")
    )
    assert [h.answer for h in then.hops] == ["Vela", "Bo Lind"] and then.answer == "Bo Lind"
    assert [r.prompt for r in lm.requests] == ["answer_free.v1"] * 2  # rules planned: no LM
    record = now.to_record("q1", NS)
    assert record.schema_version == 5 and record.mode == "multi_hop" and record.rounds == 1
    assert record.hops is not None and [h.answer for h in record.hops] == ["Orbit", "Cy Ode"]
    assert metrics.answers.labels("multi_hop")._value.get() == 2


async def test_single_mode_reads_every_related_fact() -> None:
    lm = ScriptedLM([_answer_from_prompt])
    engine, _ = await _engine(lm)
    single = await engine.ask(AskRequest(BOTH, NS, mode="single"))
    assert single.mode == "single" and single.hops == []
    texts = {f.fact.text for f in single.facts}
    assert {TRIPLES[1][2], TRIPLES[2][2]} <= texts  # both chief executives: ambiguous
    assert single.answer == "unknown"


async def test_auto_follows_hops_only_for_a_question_of_two_or_more() -> None:
    lm = ScriptedLM([_answer_from_prompt] * 2)
    engine, _ = await _engine(lm, mode="auto")
    assert (await engine.ask(AskRequest(BOTH, NS))).mode == "multi_hop"
    one = await engine.ask(AskRequest("Where does Ana Silva live?", NS))
    assert one.mode == "single" and one.hops == []


async def test_the_lm_plans_what_no_rule_reads() -> None:
    plan = json.dumps({"entity": "Ana Silva", "relations": ["employer", "chief executive"]})
    lm = ScriptedLM([plan, _answer_from_prompt])
    engine, _ = await _engine(lm)
    result = await engine.ask(AskRequest("Ana Silva's boss's boss, who?", NS, mode="auto"))
    assert [r.prompt for r in lm.requests] == ["plan_hops.v1", "answer_free.v1"]
    assert result.mode == "multi_hop" and result.answer == "Cy Ode"
    assert "plan_hops" in result.timings


async def test_an_unknown_anchor_falls_back_to_one_retrieval() -> None:
    lm = ScriptedLM([_answer_from_prompt])
    engine, _ = await _engine(lm)
    result = await engine.ask(
        AskRequest("Who is the spouse of Zed Quill's manager?", NS, mode="multi_hop")
    )
    assert result.mode == "single" and result.facts
    assert [(h.entity, h.answer) for h in result.hops] == [("Zed Quill", None)]


async def test_an_unsupported_draft_takes_a_second_round() -> None:
    lm = ScriptedLM([_answer_from_prompt, _verdict(False), _answer_from_prompt, _verdict(True)])
    engine, metrics = await _engine(lm, self_check=True, max_rounds=2)
    result = await engine.ask(AskRequest(BOTH, NS, mode="multi_hop"))
    assert [r.prompt for r in lm.requests] == [
        "answer_free.v1",
        "verify_answer.v1",
        "answer_free.v1",
        "verify_answer.v1",
    ]
    assert result.rounds == 2 and result.confidence == 1.0
    assert {"verify", "answer_2", "verify_2"} <= set(result.timings)
    assert metrics.second_rounds.labels("multi_hop")._value.get() == 1
    # The second round searched with the question and the draft: its prompt holds more facts.
    first, second = lm.requests[0].messages[-1].content, lm.requests[2].messages[-1].content
    assert second.count("\n- ") > first.count("\n- ")


async def test_one_round_at_most_reports_the_check_and_stops() -> None:
    lm = ScriptedLM([_answer_from_prompt, _verdict(False)])
    engine, metrics = await _engine(lm, self_check=True, max_rounds=1)
    result = await engine.ask(AskRequest(BOTH, NS, mode="multi_hop"))
    assert result.rounds == 1 and result.confidence == 0.0
    assert metrics.second_rounds.labels("multi_hop")._value.get() == 0


async def test_a_kafka_question_in_multi_hop_mode_is_answered_with_its_hops() -> None:
    lm = ScriptedLM([_answer_from_prompt])
    engine, _ = await _engine(lm)
    handler = QuestionHandler(engine, KeyTable(open_access=True))
    question = Question(id="q1", namespace=NS, question=BOTH, mode="multi_hop")
    answer = await handler.handle(NS.encode(), question.to_bytes(), None)
    assert answer is not None and answer.error is None and answer.answer == "Cy Ode"
    assert answer.schema_version == 5 and answer.mode == "multi_hop"
    assert answer.hops is not None and [h.entity for h in answer.hops] == ["Ana Silva", "Orbit"]
    assert answer.hops[1].facts and answer.hops[1].facts[0].text == TRIPLES[2][2]


async def test_a_plan_over_the_hop_limit_is_not_followed() -> None:
    lm = ScriptedLM([_answer_from_prompt])
    engine, _ = await _engine(lm, max_hops=1)
    result = await engine.ask(AskRequest(BOTH, NS, mode="multi_hop"))
    assert result.mode == "single" and result.hops == []
