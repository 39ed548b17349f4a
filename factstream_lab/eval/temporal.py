"""`eval temporal`: does the query agent's retrieval find what held on the day asked about?

No LM. The CLARK-News triples are loaded as facts valid over their Wikidata intervals, the
way the live code writes facts: version-2 ``add`` edits with ``valid_from``/``valid_to``,
applied by the materializer to the configured store. Every question ("On DATE, what was
SUBJECT's RELATION?", ``temporal_questions``) then runs through the query agent's own
retrieval (``ask.query.search_facts``) with the valid time it reads from the
question; a question scores when a gold fact (one valid that day) is ranked first.

Modes: the question searched without its time expression, the whole question, and no
valid-time filter at all (reads before valid time, where the fact that holds now wins
whatever the date).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from factstream.ask.query import AskRequest, search_facts
from factstream.config import Settings
from factstream.edit.materializer import Materializer
from factstream.embed.base import Embedder
from factstream.store.base import FactStore
from factstream.temporal.intervals import ValidInterval
from factstream.topics.records import (
    BatchRef,
    DecidedBy,
    EditOp,
    FactEdit,
    InputRef,
    edit_id_for,
    fact_id_for,
)
from factstream_lab.eval.datasets import Clark, load_clark, verbalise
from factstream_lab.eval.report import write_results
from factstream_lab.eval.temporal_questions import (
    Position,
    TemporalQuestion,
    TripleInterval,
    build_questions,
    triple_intervals,
)

__all__ = [
    "MODES",
    "Mode",
    "ModeScore",
    "Retrieval",
    "TemporalReport",
    "add_edit",
    "evaluate_temporal",
    "load_triples",
    "retrieval_of",
    "run_temporal",
    "run_temporal_eval",
    "temporal_edits",
]

_DECIDED = DecidedBy(model="clark-news-triples", prompt_version="eval.temporal")
_INPUT = InputRef(topic="eval.temporal", partition=0, offset=0)
_MISSES_KEPT = 25


@dataclass(frozen=True)
class Mode:
    """How questions are searched."""

    name: str
    strip_time: bool
    valid_time: bool


MODES = (
    Mode("valid time, question without its date", strip_time=True, valid_time=True),
    Mode("valid time, whole question", strip_time=False, valid_time=True),
    Mode("no valid-time filter", strip_time=False, valid_time=False),
)


@dataclass(frozen=True)
class Retrieval:
    """The query agent's retrieval settings."""

    top_k: int
    min_similarity: float
    alpha: float
    keyword_forms: bool = False  # FACTSTREAM_API_KEYWORD_FORMS
    drop_common_words: bool = False  # FACTSTREAM_API_DROP_COMMON_WORDS
    subject_bonus: float = 0.0  # FACTSTREAM_API_SUBJECT_BONUS


def retrieval_of(settings: Settings) -> Retrieval:
    """The query agent's retrieval as configured (``api`` top_k, floor, alpha and how the
    question is searched)."""
    api = settings.api
    return Retrieval(
        api.top_k,
        api.min_similarity,
        api.alpha,
        api.keyword_forms,
        api.drop_common_words,
        api.subject_bonus,
    )


@dataclass
class ModeScore:
    """How one mode scored: gold ranked first, overall and by question position."""

    mode: Mode
    questions: int = 0
    first: int = 0  # a gold fact ranked first
    in_top_k: int = 0  # a gold fact anywhere in the top_k
    accuracy: float = 0.0
    recall_at_k: float = 0.0
    # Cosine similarity of the search text to the gold fact ranked first (the margin a mode
    # leaves for the floor), averaged over the questions it got right.
    mean_first_similarity: float = 0.0
    by_position: dict[str, dict[str, float]] = field(default_factory=dict)
    misses: list[dict[str, str]] = field(default_factory=list)  # the first few, to inspect


@dataclass
class TemporalReport:
    """What ``run_temporal`` measured."""

    data: str
    triples: int
    facts: int  # triples loaded as facts
    unusable: dict[str, int]  # triples left out, by why (temporal_questions.triple_intervals)
    questions: dict[str, int]  # by position, and "all"
    retrieval: Retrieval
    scores: list[ModeScore]
    seconds: dict[str, float] = field(default_factory=dict)
    embed_model: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The report as the results file holds it."""
        return {"kind": "temporal", **asdict(self)}


def add_edit(
    namespace: str,
    document_id: str,
    position: int,
    size: int,
    text: str,
    when: datetime,
    interval: ValidInterval | None = None,
) -> FactEdit:
    """The ``add`` edit at ``position`` of a document's batch, valid over ``interval``.

    ``interval`` None: no valid time (valid from the event time ``when``).
    """
    return FactEdit(
        edit_id=edit_id_for(namespace, document_id, position),
        namespace=namespace,
        fact_id=fact_id_for(namespace, document_id, position),
        op=EditOp.ADD,
        text=text,
        truth=True,
        event_time=when,
        document_id=document_id,
        batch=BatchRef(id=f"eval-{document_id}", size=size, position=position),
        input=_INPUT,
        decided_by=_DECIDED,
        created_at=when,
        valid_from=None if interval is None else interval.start,
        valid_to=None if interval is None else interval.end,
    )


def temporal_edits(
    clark: Clark, facts: Sequence[TripleInterval], namespace: str
) -> tuple[list[list[FactEdit]], dict[str, int]]:
    """One batch of ``add`` edits per source document, each fact with its gold interval.

    The event time is the document's (a triple whose document is not shipped uses its
    interval's start, or end); the interval is the triple's, whatever the document said.

    Returns:
        The batches, and the triple index of each fact id they add.
    """
    by_document: dict[str, list[TripleInterval]] = defaultdict(list)
    for fact in facts:
        by_document[fact.triple.document_id].append(fact)
    batches, triple_of = [], {}
    for document_id, group in by_document.items():
        doc = clark.documents.get(document_id)
        batch = []
        for pos, fact in enumerate(group):
            interval = fact.interval
            when = doc.stream_time if doc else interval.start or interval.end
            assert when is not None  # noqa: S101 - usable intervals have an end
            triple_of[fact_id_for(namespace, document_id, pos)] = fact.triple.index
            text = verbalise(fact.triple)
            batch.append(add_edit(namespace, document_id, pos, len(group), text, when, interval))
        batches.append(batch)
    return batches, triple_of


async def load_triples(
    store: FactStore,
    embedder: Embedder,
    clark: Clark,
    facts: Sequence[TripleInterval],
    namespace: str,
) -> dict[str, int]:
    """Apply the triples' edits through the materializer; returns fact id -> triple index."""
    materializer = Materializer(store, embedder)
    batches, triple_of = temporal_edits(clark, facts, namespace)
    for batch in batches:
        await materializer.apply(batch)
    return triple_of


async def evaluate_temporal(
    store: FactStore,
    embedder: Embedder,
    questions: Sequence[TemporalQuestion],
    fact_ids: dict[str, int],
    namespace: str,
    retrieval: Retrieval,
    modes: Sequence[Mode] = MODES,
    tick: Callable[[], None] | None = None,
) -> list[ModeScore]:
    """Score each mode on every question: is a gold fact ranked first?"""
    now = datetime.now(UTC)
    scores = []
    for mode in modes:
        score = ModeScore(mode)
        tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        similarity = 0.0
        for question in questions:
            found = await search_facts(
                store,
                embedder,
                AskRequest(question.text, namespace),
                top_k=retrieval.top_k,
                min_similarity=retrieval.min_similarity,
                alpha=retrieval.alpha,
                keyword_forms=retrieval.keyword_forms,
                drop_common_words=retrieval.drop_common_words,
                subject_bonus=retrieval.subject_bonus,
                strip_time=mode.strip_time,
                valid_time=mode.valid_time,
                now=now,
            )
            ranked = [fact_ids.get(f.fact.fact_id, -1) for f in found.facts]
            first = bool(ranked) and ranked[0] in question.gold
            score.questions += 1
            score.first += first
            similarity += found.facts[0].score if first else 0.0
            score.in_top_k += any(index in question.gold for index in ranked)
            tally[question.position.value][0] += 1
            tally[question.position.value][1] += first
            if not first and len(score.misses) < _MISSES_KEPT:
                top = found.facts[0].fact.text if found.facts else "(nothing)"
                score.misses.append({"question": question.text, "ranked_first": top})
            if tick is not None:
                tick()
        score.accuracy = score.first / max(1, score.questions)
        score.recall_at_k = score.in_top_k / max(1, score.questions)
        score.mean_first_similarity = similarity / max(1, score.first)
        score.by_position = {
            p.value: {"questions": n, "accuracy": right / max(1, n)}
            for p in Position
            for n, right in [tally[p.value]]
        }
        scores.append(score)
    return scores


async def run_temporal(
    data_dir: Path,
    store: FactStore,
    embedder: Embedder,
    retrieval: Retrieval,
    *,
    namespace: str | None = None,
    out: Path | None = None,
    modes: Sequence[Mode] = MODES,
    tick: Callable[[], None] | None = None,
    embed_model: str | None = None,
) -> TemporalReport:
    """Load ``data_dir``'s triples into a fresh namespace, ask, score, drop the namespace.

    Args:
        data_dir: a CLARK-News folder (documents.jsonl, triples.jsonl).
        store: the store the live code uses (Weaviate from settings; memory in unit tests).
        embedder: the configured embedder.
        retrieval: the query agent's top_k, similarity floor and alpha.
        namespace: where to load (default: a new ``eval-temporal-<time>``); dropped after.
        out: if given, the report is also written to ``out/temporal.json``.
        modes: the ways of searching to score.
        tick: called after every question (progress).
        embed_model: the embedding model's name, for the report.

    Returns:
        The report: questions by position and each mode's scores.
    """
    started = time.perf_counter()
    clark = load_clark(data_dir)
    facts, unusable = triple_intervals(clark.triples)
    questions = build_questions(facts)
    namespace = namespace or f"eval-temporal-{datetime.now(UTC):%Y%m%d%H%M%S}"
    try:
        fact_ids = await load_triples(store, embedder, clark, facts, namespace)
        loaded = time.perf_counter()
        scores = await evaluate_temporal(
            store, embedder, questions, fact_ids, namespace, retrieval, modes, tick
        )
    finally:
        await store.drop_namespace(namespace)
    counts = {p.value: sum(q.position is p for q in questions) for p in Position}
    report = TemporalReport(
        data=str(data_dir),
        triples=len(clark.triples),
        facts=len(facts),
        unusable=unusable,
        questions={**counts, "all": len(questions)},
        retrieval=retrieval,
        scores=scores,
        seconds={
            "load": round(loaded - started, 2),
            "ask": round(time.perf_counter() - loaded, 2),
        },
        embed_model=embed_model,
    )
    if out is not None:
        write_results(out, "temporal", report.to_json())
    return report


async def run_temporal_eval(
    settings: Settings,
    data_dir: Path,
    out: Path | None = None,
    tick: Callable[[], None] | None = None,
) -> TemporalReport:
    """``run_temporal`` on the configured clients: Weaviate, the embedder, the retrieval.

    What ``factstream eval temporal --data DIR [--out DIR]`` runs.
    """
    from factstream.clients import open_clients  # the real adapters: not for unit tests

    async with open_clients(settings) as clients:
        return await run_temporal(
            data_dir,
            clients.store,
            clients.embedder,
            retrieval_of(settings),
            out=out,
            tick=tick,
            embed_model=settings.embed.model,
        )
