"""The query agent's logic: retrieve a namespace's facts true at a time, answer with ERASE A.3.

Used by the HTTP route (``POST /v1/ask``), the Kafka agent (factstream.questions) and
``factstream ask``. Facts are shown to the LM and returned as they stood at ``as_of``: the
truth then, and the history up to then (nothing after it was known at that time). Reads
are bitemporal: besides ``as_of`` (what was believed), the facts must have held in the
world at the valid time the request gives, the question names, the LM plans from an event
the question names (``time_plan``, when ``FACTSTREAM_API_TIME_PLAN`` is on), or else now
(``valid_time.question_valid_time``); the result says which interval was used and why.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from factstream.config import ApiSettings
from factstream.embed.base import Embedder
from factstream.errors import NamespaceNotFound, QuestionInvalid
from factstream.knowledge.time_plan import TimePlanner
from factstream.knowledge.valid_time import DEFAULT_STRIP_TIME, ValidTime, question_valid_time
from factstream.metrics import QueryMetrics
from factstream.prompts.answer import FactWithHistory
from factstream.prompts.answer import HistoryEntry as PromptHistory
from factstream.store.base import FactStore, SearchHit
from factstream.store.rules import valid_interval
from factstream.tasks.answering import answer_choice, answer_free
from factstream.tasks.runner import AttemptSink, TaskRunner
from factstream.temporal.intervals import ValidInterval, at
from factstream.topics.records import Answer, AnswerFact, Fact, HistoryEntry, Question

if TYPE_CHECKING:  # the real adapters' bundle: knowledge/ imports no SDK at run time
    from factstream.clients import Clients
    from factstream.config import Settings

__all__ = [
    "AskRequest",
    "AskResult",
    "QueryEngine",
    "Retrieval",
    "UsedFact",
    "fact_as_of",
    "prompt_facts",
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
        )


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

    Returns:
        The facts, best first, as they stood at ``as_of``, and the valid time used.
    """
    timings = timings if timings is not None else {}
    now = now or datetime.now(UTC)
    valid = question_valid_time(
        request.question,
        valid=request.valid,
        as_of=request.as_of,
        now=now,
        strip=strip_time,
        enabled=valid_time,
    )
    if planner is not None:
        valid = await planner.refine(request.namespace, valid, request.as_of, now, timings)
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
        """Retrieve, then answer; ``timings`` has embed, retrieve, answer and total seconds."""
        start = time.perf_counter()
        timings: dict[str, float] = {}
        retrieval = await self.retrieve_timed(request, timings)
        result = await self.answer(request, retrieval.facts, timings, retrieval.valid_time)
        timings["total"] = time.perf_counter() - start
        return result
