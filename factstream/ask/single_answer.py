"""The single-answer engine: one retrieval of the facts true at a time, one LM call.

``AnswerEngine`` is the base of ``ask.query.QueryEngine``: it checks a request's
bounds, retrieves (``search_facts``: embed, hybrid search for the facts true at ``as_of``
that held at the valid time the question reads, ``resolve_valid_time``) and answers with
the ERASE A.3 prompt. Modes, hops and the self-check are ``QueryEngine``'s.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Self

from factstream.ask.ask_records import (
    AskRequest,
    AskResult,
    Retrieval,
    UsedFact,
    prompt_facts,
    used_fact,
)
from factstream.ask.common_words import common_names, common_words_left_out
from factstream.ask.keywords import keyword_query
from factstream.ask.subjects import FETCH, favour_subjects
from factstream.ask.time_plan import TimePlanner
from factstream.ask.valid_time import DEFAULT_STRIP_TIME, ValidTime, question_valid_time
from factstream.config import ApiSettings
from factstream.embed.base import Embedder, Vector
from factstream.errors import NamespaceNotFound, QuestionInvalid
from factstream.lm.tasks.answering import answer_choice, answer_free
from factstream.lm.tasks.runner import AttemptSink, TaskRunner
from factstream.metrics import QueryMetrics
from factstream.store.base import FactStore, Preparing

if TYPE_CHECKING:  # the real adapters' bundle: ask/ imports no SDK at run time
    from factstream.clients import Clients
    from factstream.config import Settings

__all__ = ["AnswerEngine", "resolve_valid_time", "search_facts"]


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
    keyword_forms: bool = False,
    drop_common_words: bool = False,
    subject_bonus: float = 0.0,
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
        keyword_forms: the keyword search also matches the other forms of the search
            text's words (``ask.keywords``); the embedding is of the text as it is.
        drop_common_words: search without the words more than half of the namespace's
            facts contain (``ask.common_words``), on both sides of the hybrid search.
        subject_bonus: with ``drop_common_words``, added to the score of the facts whose
            subject is a name left out as common (``ask.subjects``); 0: none.

    Returns:
        The facts, best first, as they stood at ``as_of``, and the valid time used.
    """
    timings = timings if timings is not None else {}
    valid = resolved or await resolve_valid_time(
        request, now or datetime.now(UTC), strip_time, valid_time, planner, timings
    )
    text = valid.search_text
    names: list[str] = []
    if drop_common_words:
        start = time.perf_counter()
        asked = text
        text, common = await common_words_left_out(store, request.namespace, text, request.as_of)
        names = common_names(asked, common) if subject_bonus > 0 and text != asked else []
        timings["common_words"] = time.perf_counter() - start
    start = time.perf_counter()
    vector = await _embed_while_preparing(store, embedder, request.namespace, valid, timings, text)
    timings["embed"] = time.perf_counter() - start
    start = time.perf_counter()
    keywords = keyword_query(text) if keyword_forms else text
    hits = await store.search(
        request.namespace,
        keywords,
        vector,
        as_of=request.as_of,
        top_k=top_k * FETCH if names else top_k,
        min_similarity=min_similarity,
        alpha=alpha,
        valid=valid.interval,
    )
    if names:
        hits = favour_subjects(hits, names, subject_bonus, top_k)
    timings["retrieve"] = time.perf_counter() - start
    return Retrieval([used_fact(hit, request.as_of) for hit in hits], valid)


async def _embed_while_preparing(
    store: FactStore,
    embedder: Embedder,
    namespace: str,
    valid: ValidTime,
    timings: dict[str, float],
    text: str,
) -> Vector:
    """The vector of ``text`` (the search text); meanwhile a ``Preparing`` store readies the
    namespace (an inactive tenant's activation overlaps the embedding; "prepare" is its
    seconds)."""
    if not isinstance(store, Preparing):
        return await embedder.embed(text)
    embedding = asyncio.ensure_future(embedder.embed(text))
    start = time.perf_counter()
    try:
        await store.prepare_read(namespace, valid=valid.interval)
    except BaseException:
        embedding.cancel()
        raise
    timings["prepare"] = time.perf_counter() - start
    return await embedding


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


class AnswerEngine:
    """Answers questions from a fact store with one retrieval and one LM call."""

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
    def of(cls, clients: Clients, settings: Settings, *, embedder: Embedder | None = None) -> Self:
        """The engine as configured: ``api`` limits and alpha, the clients' metrics;
        the one way every caller builds it. ``embedder`` replaces the clients' (a benchmark
        comparing runtimes on one store)."""
        return cls(
            clients.store,
            embedder or clients.embedder,
            clients.runner,
            settings.api,
            alpha=settings.api.alpha,
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
        if not await self._store.has_namespace(namespace):
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
        lm_plans: bool = True,
    ) -> Retrieval:
        """``retrieve``, and the valid time the facts held in (``search_facts``).

        ``question_time=False`` reads the valid time from the request only: the text is not
        searched for a time expression, and without ``request.valid`` nothing is filtered by
        valid time (a search, as ``GET /v1/facts?q=`` is, rather than a question).
        ``lm_plans=False``: a time the rules cannot read is not planned by the LM.
        """
        top_k = self.validate(request)
        retrieval = await self._search_facts(
            request,
            top_k,
            timings,
            strip_time=self._strip_time,
            valid_time=question_time or request.valid is not None,
            planner=self._planner if question_time and lm_plans else None,
        )
        # A hit proves the namespace has facts: the check (a store round trip, a tenant
        # listing on Weaviate) is made only when the search found nothing.
        if not retrieval.facts:
            await self.require_namespace(request.namespace)
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
        return (await self._search_facts(request, top_k, timings, resolved=valid)).facts

    async def _search_facts(
        self,
        request: AskRequest,
        top_k: int,
        timings: dict[str, float] | None,
        **options: Any,
    ) -> Retrieval:
        """``search_facts`` on this engine's store and embedder, floor and alpha."""
        return await search_facts(
            self._store,
            self._embedder,
            request,
            top_k=top_k,
            min_similarity=self._settings.min_similarity,
            alpha=self._alpha,
            timings=timings,
            keyword_forms=self._settings.keyword_forms,
            drop_common_words=self._settings.drop_common_words,
            subject_bonus=self._settings.subject_bonus,
            **options,
        )
