"""The query agent's logic: retrieve a namespace's facts true at a time, answer with ERASE A.3.

Used by the HTTP route (``POST /v1/ask``), the Kafka agent (factstream.questions) and
``factstream ask``. Facts are shown to the LM and returned as they stood at ``as_of``: the
truth then, and the history up to then (nothing after it was known at that time). Reads
are bitemporal: besides ``as_of`` (what was believed), the facts must have held in the
world at the valid time the request gives, the question names, the LM plans from an event
the question names (``time_plan``, when ``FACTSTREAM_API_TIME_PLAN`` is on), or else now
(``valid_time.question_valid_time``); the result says which interval was used and why.

``mode`` (docs/design.md section 6): ``single`` is one retrieval and one LM call;
``multi_hop`` plans the question into hops and follows them on one snapshot
(``ask.multihop``); ``auto`` does so when the plan has two hops or more. With
``self_check`` on, the draft is checked against its facts and, when they do not support
it, retrieved for once more with the question and the draft (``max_rounds``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import replace
from datetime import UTC, datetime
from typing import Literal

from factstream.ask.ask_records import (
    AskRequest,
    AskResult,
    Gathered,
    Retrieval,
    UsedFact,
    UsedHop,
    fact_as_of,
    prompt_facts,
    used_fact,
)
from factstream.ask.chain import HopWhere
from factstream.ask.multihop import HopPlanner, follow_chain
from factstream.ask.single_answer import AnswerEngine, resolve_valid_time, search_facts
from factstream.errors import LMError
from factstream.lm.tasks.answering import check_answer
from factstream.lm.tasks.runner import AttemptSink

log = logging.getLogger(__name__)

__all__ = [
    "AskRequest",
    "AskResult",
    "Gathered",
    "QueryEngine",
    "Retrieval",
    "UsedFact",
    "UsedHop",
    "fact_as_of",
    "prompt_facts",
    "resolve_valid_time",
    "search_facts",
]


class QueryEngine(AnswerEngine):
    """Answers questions in a mode (single, multi-hop, auto), with an optional self-check;
    one per process, shared by callers."""

    async def ask(self, request: AskRequest) -> AskResult:
        """Gather the facts (one retrieval, or hops), then answer (and check the draft);
        ``timings`` has each stage's seconds and the total."""
        start = time.perf_counter()
        timings: dict[str, float] = {}
        gathered = await self.gather(request, timings)
        result = await self.respond(request, gathered, timings)
        timings["total"] = time.perf_counter() - start
        return result

    async def gather(
        self,
        request: AskRequest,
        timings: dict[str, float] | None = None,
        *,
        lm_plans: bool = True,
    ) -> Gathered:
        """The facts an answer is drawn from, in the request's mode (the configured one if
        it names none); ``auto`` follows hops when the question plans into two or more.

        Multi-hop reads one snapshot: every hop at ``as_of`` (or the time it started) and
        at the question's valid time. A question no plan reads, or whose first hop finds
        nothing, is answered from one retrieval (mode ``single``, the hops tried listed).
        ``lm_plans=False`` asks no LM: hops are planned by the rules only and a time the
        rules cannot read is not planned (the LM-free evaluations read so).
        """
        mode = request.mode or self._settings.mode
        if mode == "single":
            retrieval = await self.retrieve_timed(request, timings, lm_plans=lm_plans)
            return Gathered(retrieval.facts, retrieval.valid_time)
        timings = timings if timings is not None else {}
        top_k = self.validate(request)
        now = datetime.now(UTC)
        _, valid = await asyncio.gather(
            self.require_namespace(request.namespace),
            resolve_valid_time(
                request, now, self._strip_time, True, self._planner if lm_plans else None, timings
            ),
        )
        planner = HopPlanner(self._runner if lm_plans else None, self._settings.max_hops)
        plan = await planner.plan(valid.search_text, timings)
        hops: list[UsedHop] = []
        facts: list[UsedFact] = []
        if plan is not None and (mode == "multi_hop" or plan.hops >= 2):
            where = HopWhere(request.namespace, request.as_of or now, valid.interval)
            chain = await follow_chain(
                self._store,
                self._embedder,
                where,
                plan,
                alpha=self._alpha,
                hop_top_k=self._settings.hop_top_k,
            )
            timings["hops"] = sum(h.seconds for h in chain.hops)
            hops = [UsedHop.of(h, request.as_of) for h in chain.hops]
            facts = [used_fact(h.hit, request.as_of) for h in chain.facts()]
            if facts and chain.complete:
                return Gathered(facts, valid, "multi_hop", hops)
        # No plan, one hop in auto, or a broken chain: one retrieval fills in behind it.
        single = await self._search(request, top_k, valid, timings)
        more = [f for f in single if f.fact.fact_id not in {u.fact.fact_id for u in facts}]
        mode_used: Literal["single", "multi_hop"] = "multi_hop" if facts else "single"
        return Gathered((facts + more)[: max(top_k, len(facts))], valid, mode_used, hops)

    async def respond(
        self,
        request: AskRequest,
        gathered: Gathered,
        timings: dict[str, float] | None = None,
        on_token: AttemptSink | None = None,
    ) -> AskResult:
        """Answer from the gathered facts; with ``self_check``, check the draft and, when the
        facts do not support it, retrieve once more with the question and the draft
        (at most ``max_rounds`` rounds).

        ``on_token`` receives each answer's pieces as the LM writes them; a second round's
        attempts are numbered after the first round's, so they replace its draft.
        """
        timings = timings if timings is not None else {}
        facts, rounds = gathered.facts, 1
        attempts = [0]

        async def first(attempt: int, text: str) -> None:
            attempts[0] = max(attempts[0], attempt)
            if on_token is not None:
                await on_token(attempt, text)

        async def later(attempt: int, text: str) -> None:
            if on_token is not None:
                await on_token(attempts[0] + attempt, text)

        result = await self.answer(
            request, facts, timings, gathered.valid_time, on_token=first if on_token else None
        )
        confidence = await self._check(request, result, timings, "verify")
        if confidence == 0.0 and self._settings.max_rounds >= 2:
            rounds = 2
            if self._metrics is not None:
                self._metrics.second_rounds.labels(gathered.mode).inc()
            top_k = self.validate(request)
            draft = AskRequest(f"{request.question} {result.answer}", request.namespace)
            found = await self._search(draft, top_k, gathered.valid_time, {}, request.as_of)
            seen = {f.fact.fact_id for f in found}
            facts = found + [f for f in facts if f.fact.fact_id not in seen]
            second: dict[str, float] = {}
            result = await self.answer(
                request, facts, second, gathered.valid_time, on_token=later if on_token else None
            )
            timings["answer_2"] = second["answer"]
            confidence = await self._check(request, result, timings, "verify_2")
        if self._metrics is not None:
            self._metrics.answers.labels(gathered.mode).inc()
        return replace(
            result,
            timings=timings,
            mode=gathered.mode,
            hops=gathered.hops,
            rounds=rounds,
            confidence=confidence,
        )

    async def _check(
        self, request: AskRequest, result: AskResult, timings: dict[str, float], stage: str
    ) -> float | None:
        """1.0 when the draft's facts support it, 0.0 when not, None when not checked."""
        if not self._settings.self_check:
            return None
        start = time.perf_counter()
        try:
            verdict = await check_answer(
                self._runner,
                request.question,
                result.answer,
                prompt_facts(result.facts),
                as_of=request.as_of,
            )
        except LMError as exc:  # no verdict: the draft stands, unchecked
            log.info("self-check failed: %s", exc)
            return None
        finally:
            timings[stage] = time.perf_counter() - start
        return 1.0 if verdict.value.supported else 0.0
