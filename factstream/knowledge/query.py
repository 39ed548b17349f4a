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
(``knowledge.multihop``); ``auto`` does so when the plan has two hops or more. With
``self_check`` on, the draft is checked against its facts and, when they do not support
it, retrieved for once more with the question and the draft (``max_rounds``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal

from factstream.config import ApiSettings
from factstream.embed.base import Embedder
from factstream.errors import LMError, NamespaceNotFound, QuestionInvalid
from factstream.knowledge.chain import HopWhere
from factstream.knowledge.multihop import HopPlanner, HopResult, follow_chain
from factstream.knowledge.time_plan import TimePlanner
from factstream.knowledge.valid_time import DEFAULT_STRIP_TIME, ValidTime, question_valid_time
from factstream.metrics import QueryMetrics
from factstream.prompts.answer import FactWithHistory
from factstream.prompts.answer import HistoryEntry as PromptHistory
from factstream.store.base import FactStore, SearchHit
from factstream.store.rules import valid_interval
from factstream.tasks.answering import answer_choice, answer_free, check_answer
from factstream.tasks.runner import AttemptSink, TaskRunner
from factstream.temporal.intervals import ValidInterval, at
from factstream.topics.records import (
    Answer,
    AnswerFact,
    AnswerHop,
    AskMode,
    Fact,
    HistoryEntry,
    Question,
)

if TYPE_CHECKING:  # the real adapters' bundle: knowledge/ imports no SDK at run time
    from factstream.clients import Clients
    from factstream.config import Settings

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


@dataclass(frozen=True)
class AskRequest:
    """A question about one namespace, as of a time (None: now).

    ``valid`` is the valid time asked about (``at(t)`` for valid_at, an interval for
    valid_between); None lets the question's own time expression, or now, decide.
    """

    question: str
    namespace: str
    as_of: datetime | None = None
    top_k: int | None = None
    choices: Sequence[str] | None = None
    valid: ValidInterval | None = None
    mode: AskMode | None = None  # None: the configured mode

    @classmethod
    def from_question(cls, question: Question) -> AskRequest:
        """The request a Kafka question record makes."""
        valid = at(question.valid_at) if question.valid_at is not None else None
        if question.valid_between is not None:
            valid = ValidInterval(question.valid_between.start, question.valid_between.end)
        return cls(
            question.question,
            question.namespace,
            question.as_of,
            question.top_k,
            question.choices,
            valid,
            question.mode,
        )


@dataclass(frozen=True)
class UsedFact:
    """A fact as given to the LM: its state at ``as_of`` and its cosine similarity.

    ``valid`` is when it held in the world as known at ``as_of`` (``store.rules.valid_interval``:
    an end set by a world change after ``as_of`` reads open).
    """

    fact: Fact
    truth: bool
    history: list[HistoryEntry]
    score: float
    valid: ValidInterval

    def to_record(self) -> AnswerFact:
        return AnswerFact(
            fact_id=self.fact.fact_id,
            text=self.fact.text,
            truth=self.truth,
            history=self.history,
            score=self.score,
            valid_from=self.valid.start,
            valid_to=self.valid.end,
        )


@dataclass(frozen=True)
class UsedHop:
    """One hop of a multi-hop answer, its facts as of the question (``multihop.HopResult``)."""

    question: str
    entity: str
    relation: str
    facts: list[UsedFact]
    answer: str | None
    seconds: float
    pruned: int

    @classmethod
    def of(cls, hop: HopResult, as_of: datetime | None) -> UsedHop:
        facts = [_used(h.hit, as_of) for h in hop.facts]
        return cls(
            hop.question, hop.entity, hop.relation, facts, hop.answer, hop.seconds, hop.pruned
        )

    def to_record(self) -> AnswerHop:
        return AnswerHop(
            question=self.question,
            entity=self.entity,
            relation=self.relation,
            facts=[f.to_record() for f in self.facts],
            answer=self.answer,
            seconds=self.seconds,
            pruned=self.pruned,
        )


@dataclass(frozen=True)
class Retrieval:
    """The facts retrieved for a question, best first, and the valid time they held in."""

    facts: list[UsedFact]
    valid_time: ValidTime


@dataclass(frozen=True)
class AskResult:
    """An answer, the facts in its prompt, who answered, and seconds per stage.

    ``valid_time`` is the valid-time filter the facts were retrieved with (None when the
    caller retrieved them itself and did not say).
    """

    answer: str
    reasoning: str
    facts: list[UsedFact]
    model: str
    prompt: str
    timings: dict[str, float] = field(default_factory=dict)
    valid_time: ValidTime | None = None
    mode: Literal["single", "multi_hop"] = "single"
    hops: list[UsedHop] = field(default_factory=list)
    rounds: int = 1
    confidence: float | None = None  # the self-check's verdict (None: not checked)

    def to_record(self, question_id: str, namespace: str) -> Answer:
        """The reply record on factstream.answers."""
        valid = self.valid_time
        return Answer(
            question_id=question_id,
            namespace=namespace,
            answer=self.answer,
            facts=[f.to_record() for f in self.facts],
            model=self.model,
            timings=self.timings,
            valid_time=valid.window() if valid is not None else None,
            time_expression=valid.expression if valid is not None else None,
            valid_time_source=valid.source if valid is not None else None,
            time_plan=valid.plan if valid is not None else None,
            mode=self.mode,
            hops=[h.to_record() for h in self.hops] or None,
            rounds=self.rounds,
            confidence=self.confidence,
        )


@dataclass(frozen=True)
class Gathered:
    """What an answer is drawn from: the facts, their valid time, the mode, the hops."""

    facts: list[UsedFact]
    valid_time: ValidTime
    mode: Literal["single", "multi_hop"] = "single"
    hops: list[UsedHop] = field(default_factory=list)


def fact_as_of(fact: Fact, as_of: datetime | None) -> tuple[bool, list[HistoryEntry]]:
    """The fact's truth and history as known at ``as_of`` (None: now, the whole history)."""
    if as_of is None:
        return fact.truth, list(fact.history)
    history = [h for h in fact.history if h.ts <= as_of]
    return (history[-1].truth if history else False), history


def prompt_facts(facts: Sequence[UsedFact]) -> list[FactWithHistory]:
    """The facts as the answer prompt shows them: text and history as of the question."""
    return [
        FactWithHistory(
            text=f.fact.text,
            history=tuple(PromptHistory(ts=h.ts, truth=h.truth) for h in f.history),
        )
        for f in facts
    ]


async def search_facts(
    store: FactStore,
    embedder: Embedder,
    request: AskRequest,
    *,
    top_k: int,
    min_similarity: float,
    alpha: float,
    strip_time: bool = DEFAULT_STRIP_TIME,
    valid_time: bool = True,
    now: datetime | None = None,
    timings: dict[str, float] | None = None,
    planner: TimePlanner | None = None,
    resolved: ValidTime | None = None,
) -> Retrieval:
    """The query agent's retrieval: the facts true at ``as_of`` that held at the valid time.

    Args:
        store: the fact store.
        embedder: embeds the search text.
        request: the question (its namespace is not checked here).
        top_k: at most this many facts.
        min_similarity: the similarity floor.
        alpha: hybrid weight (1: dense only).
        strip_time: search without the time expression the question names.
        valid_time: False searches without any valid-time filter (as before valid time).
        now: the present (default: the clock), for relative times and the default filter.
        timings: seconds of "embed" and "retrieve" (and "plan") are added here.
        planner: plans the valid time of a question the rules cannot read (None: no plan).
        resolved: the valid time, already read (``resolve_valid_time``): not read again.

    Returns:
        The facts, best first, as they stood at ``as_of``, and the valid time used.
    """
    timings = timings if timings is not None else {}
    valid = resolved or await resolve_valid_time(
        request, now or datetime.now(UTC), strip_time, valid_time, planner, timings
    )
    start = time.perf_counter()
    vector = await embedder.embed(valid.search_text)
    timings["embed"] = time.perf_counter() - start
    start = time.perf_counter()
    hits = await store.search(
        request.namespace,
        valid.search_text,
        vector,
        as_of=request.as_of,
        top_k=top_k,
        min_similarity=min_similarity,
        alpha=alpha,
        valid=valid.interval,
    )
    timings["retrieve"] = time.perf_counter() - start
    return Retrieval([_used(hit, request.as_of) for hit in hits], valid)


async def resolve_valid_time(
    request: AskRequest,
    now: datetime,
    strip_time: bool,
    enabled: bool,
    planner: TimePlanner | None,
    timings: dict[str, float],
) -> ValidTime:
    """The valid time a question reads at: the request's, its own, a plan's, or now's."""
    valid = question_valid_time(
        request.question,
        valid=request.valid,
        as_of=request.as_of,
        now=now,
        strip=strip_time,
        enabled=enabled,
    )
    if planner is not None:
        valid = await planner.refine(request.namespace, valid, request.as_of, now, timings)
    return valid


def _used(hit: SearchHit, as_of: datetime | None) -> UsedFact:
    truth, history = fact_as_of(hit.fact, as_of)
    return UsedFact(hit.fact, truth, history, hit.similarity, valid_interval(hit.fact, as_of))


class QueryEngine:
    """Answers questions from a fact store with an LM; one per process, shared by callers."""

    def __init__(
        self,
        store: FactStore,
        embedder: Embedder,
        runner: TaskRunner,
        settings: ApiSettings,
        *,
        alpha: float,
        strip_time: bool = DEFAULT_STRIP_TIME,
        metrics: QueryMetrics | None = None,
    ) -> None:
        self._store, self._embedder, self._runner = store, embedder, runner
        self._settings, self._alpha, self._strip_time = settings, alpha, strip_time
        self._metrics = metrics
        self._hop_planner = HopPlanner(runner, settings.max_hops)
        self._planner = (
            TimePlanner(
                store,
                embedder,
                runner,
                alpha,
                settings.time_plan_min_similarity,
                metrics.time_plans if metrics is not None else None,
            )
            if settings.time_plan
            else None
        )

    @classmethod
    def of(cls, clients: Clients, settings: Settings) -> QueryEngine:
        """The engine as configured: ``api`` limits, ``editor`` alpha, the clients' metrics."""
        return cls(
            clients.store,
            clients.embedder,
            clients.runner,
            settings.api,
            alpha=settings.editor.alpha,
            metrics=clients.metrics.query,
        )

    def validate(self, request: AskRequest) -> int:
        """Check the bounds of a request; returns its top_k.

        Raises:
            QuestionInvalid: empty or too long, top_k out of range, bad choices.
        """
        limits = self._settings
        text = request.question.strip()
        if not text:
            raise QuestionInvalid("the question is empty")
        if len(request.question) > limits.max_question_chars:
            raise QuestionInvalid(
                f"the question has {len(request.question)} characters; at most "
                f"{limits.max_question_chars} are allowed"
            )
        top_k = request.top_k if request.top_k is not None else limits.top_k
        if not 1 <= top_k <= limits.max_top_k:
            raise QuestionInvalid(f"top_k must be between 1 and {limits.max_top_k}, not {top_k}")
        if request.choices is not None:
            choices = list(request.choices)
            if not 2 <= len(choices) <= limits.max_choices:
                raise QuestionInvalid(
                    f"a multiple-choice question has 2 to {limits.max_choices} choices, "
                    f"not {len(choices)}"
                )
            if len(set(choices)) != len(choices) or any(not c.strip() for c in choices):
                raise QuestionInvalid("choices must be distinct and not blank")
        return top_k

    async def require_namespace(self, namespace: str) -> None:
        """Raises NamespaceNotFound unless the namespace has facts."""
        if namespace not in await self._store.namespaces():
            raise NamespaceNotFound(namespace)

    async def retrieve(
        self,
        request: AskRequest,
        timings: dict[str, float] | None = None,
        *,
        question_time: bool = True,
    ) -> list[UsedFact]:
        """The facts true at ``as_of`` most related to the question, best first."""
        return (await self.retrieve_timed(request, timings, question_time=question_time)).facts

    async def retrieve_timed(
        self,
        request: AskRequest,
        timings: dict[str, float] | None = None,
        *,
        question_time: bool = True,
    ) -> Retrieval:
        """``retrieve``, and the valid time the facts held in (``search_facts``).

        ``question_time=False`` reads the valid time from the request only: the text is not
        searched for a time expression, and without ``request.valid`` nothing is filtered by
        valid time (a search, as ``GET /v1/facts?q=`` is, rather than a question).
        """
        top_k = self.validate(request)
        # The namespace check is a store round trip: made while the question is embedded.
        _, retrieval = await asyncio.gather(
            self.require_namespace(request.namespace),
            search_facts(
                self._store,
                self._embedder,
                request,
                top_k=top_k,
                min_similarity=self._settings.min_similarity,
                alpha=self._alpha,
                strip_time=self._strip_time,
                valid_time=question_time or request.valid is not None,
                timings=timings,
                planner=self._planner if question_time else None,
            ),
        )
        return retrieval

    async def answer(
        self,
        request: AskRequest,
        facts: Sequence[UsedFact],
        timings: dict[str, float] | None = None,
        valid_time: ValidTime | None = None,
        on_token: AttemptSink | None = None,
    ) -> AskResult:
        """Ask the LM with the ERASE A.3 prompt (multiple choice when ``choices`` are given).

        ``on_token`` receives the answer's pieces as the LM writes them (streamed).
        """
        timings = timings if timings is not None else {}
        shown = prompt_facts(facts)
        start = time.perf_counter()
        if request.choices is not None:
            result = await answer_choice(
                self._runner,
                request.question,
                request.choices,
                shown,
                as_of=request.as_of,
                on_token=on_token,
            )
        else:
            result = await answer_free(
                self._runner, request.question, shown, as_of=request.as_of, on_token=on_token
            )
        timings["answer"] = time.perf_counter() - start
        return AskResult(
            answer=result.value.answer,
            reasoning=result.value.reasoning,
            facts=list(facts),
            model=result.model,
            prompt=result.prompt,
            timings=timings,
            valid_time=valid_time,
        )

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
        self, request: AskRequest, timings: dict[str, float] | None = None
    ) -> Gathered:
        """The facts an answer is drawn from, in the request's mode (the configured one if
        it names none); ``auto`` follows hops when the question plans into two or more.

        Multi-hop reads one snapshot: every hop at ``as_of`` (or the time it started) and
        at the question's valid time. A question no plan reads, or whose first hop finds
        nothing, is answered from one retrieval (mode ``single``, the hops tried listed).
        """
        mode = request.mode or self._settings.mode
        if mode == "single":
            retrieval = await self.retrieve_timed(request, timings)
            return Gathered(retrieval.facts, retrieval.valid_time)
        timings = timings if timings is not None else {}
        top_k = self.validate(request)
        now = datetime.now(UTC)
        _, valid = await asyncio.gather(
            self.require_namespace(request.namespace),
            resolve_valid_time(request, now, self._strip_time, True, self._planner, timings),
        )
        plan = await self._hop_planner.plan(valid.search_text, timings)
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
            facts = [_used(h.hit, request.as_of) for h in chain.facts()]
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

    async def _search(
        self,
        request: AskRequest,
        top_k: int,
        valid: ValidTime,
        timings: dict[str, float],
        as_of: datetime | None = None,
    ) -> list[UsedFact]:
        """One retrieval at an already read valid time (``as_of``: else the request's)."""
        if as_of is not None:
            request = replace(request, as_of=as_of)
        found = await search_facts(
            self._store,
            self._embedder,
            request,
            top_k=top_k,
            min_similarity=self._settings.min_similarity,
            alpha=self._alpha,
            timings=timings,
            resolved=valid,
        )
        return found.facts

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
