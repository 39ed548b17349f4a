"""`factstream eval locomo`: evidence recall and time resolved on LoCoMo, per knowledge base.

For each conversation (or the slice asked for) and each knowledge base:

- ``turns``: the turns as passages (``kb_turns``), no worker, no LM;
- ``facts``: the facts the editor extracted, the conversation streamed through a real
  worker as conversation documents (``kb_facts``), with the configured LM.

Every question is then put to the ask path's retrieval as of the end of the conversation
(``QueryEngine.gather``: the valid time read from the question, in each mode; hops are
planned by the rules only, so that no LM is asked), and scored (``score``): evidence
recall@5 and @10 from the turns the results cite (``provenance``), and, for temporal
questions, time resolved (``timing``).

With ``answer`` (``--lm``) the query agent also answers each question from its single-mode
facts (``QueryEngine.respond``, the configured LM), scored by token F1 per category and, with
a judge LM (``--judge-url``), by the mem0 paper's judge (``answers``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from prometheus_client import CollectorRegistry

from factstream.ask.query import AskRequest, Gathered, QueryEngine
from factstream.clients import open_clients
from factstream.config import Settings
from factstream.edit.materializer import Materializer
from factstream.embed.base import Embedder
from factstream.errors import FactstreamError
from factstream.lm.tasks.runner import TaskRunner
from factstream.store.base import FactStore
from factstream.temporal.intervals import at
from factstream.topics.records import AskMode, Fact
from factstream_lab.eval.clark import Progress
from factstream_lab.eval.locomo import answers, kb_facts
from factstream_lab.eval.locomo.chunks import DEFAULT_TURNS_PER_CHUNK, conversation_documents
from factstream_lab.eval.locomo.data import Conversation, Question, load_locomo
from factstream_lab.eval.locomo.kb_turns import DEFAULT_TURN_CONTEXT, EmbedWindow, load_turns
from factstream_lab.eval.locomo.provenance import Provenance
from factstream_lab.eval.locomo.score import KS, TEMPORAL, QuestionScore, by_category
from factstream_lab.eval.locomo.score import evidence_recall as recall_at
from factstream_lab.eval.locomo.timing import (
    gold_interval,
    mentions_time,
    read_evidence,
    resolved_within,
)

__all__ = [
    "KBS",
    "Answering",
    "Kb",
    "LocomoRun",
    "run_locomo",
    "slice_conversation",
    "turns_kb",
]

Kb = Literal["turns", "facts"]
KBS: tuple[Kb, ...] = ("turns", "facts")
MODES: tuple[AskMode, ...] = ("single", "multi_hop")
_CONCURRENT_QUESTIONS = 8


@dataclass(frozen=True)
class LocomoRun:
    """One run's inputs: the data, the knowledge bases, the slice."""

    data: Path
    out: Path
    kbs: tuple[Kb, ...] = KBS
    conversations: tuple[str, ...] = ()  # empty: every conversation in ``data``
    sessions: int | None = None  # only the first N sessions of each conversation
    limit: int | None = None  # only the first N documents (chunks) of each conversation
    turns_per_chunk: int = DEFAULT_TURNS_PER_CHUNK
    turn_context: int = DEFAULT_TURN_CONTEXT  # turns KB: turns said before in a passage
    embed_window: EmbedWindow = EmbedWindow()  # turns KB: the turns a passage's vector is of
    lm_url: str | None = None
    timeout_s: float = 6 * 3600  # for the worker to edit in one conversation
    answer: bool = False  # --lm: the query agent answers; token F1 per category
    judge: TaskRunner | None = None  # --judge-url: the judge's runner (needs answer)


@dataclass(frozen=True)
class Answering:
    """Whether to answer each question, and the judge (None: F1 only)."""

    judge: TaskRunner | None = None


def slice_conversation(
    conversation: Conversation, sessions: int | None, limit: int | None, turns_per_chunk: int
) -> Conversation:
    """The first ``sessions`` sessions, then the turns of the first ``limit`` documents;
    the questions whose evidence lies wholly in what is kept (all of them when nothing is
    cut)."""
    kept = conversation.sliced(sessions)
    if limit is None:
        return kept
    documents = conversation_documents(kept, "slice", turns_per_chunk)[:limit]
    return kept.keep_turns({turn for _, turns in documents for turn in turns})


async def run_locomo(run: LocomoRun, progress: Progress | None = None) -> dict[str, Any]:
    """Run every knowledge base of ``run`` on every conversation; returns the results."""
    progress = progress or Progress()
    started = time.monotonic()
    stamp = f"{datetime.now(UTC):%Y%m%d-%H%M%S}"
    conversations = [
        slice_conversation(c, run.sessions, run.limit, run.turns_per_chunk)
        for c in load_locomo(run.data, run.conversations)
    ]
    kbs: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    settings = Settings.from_env({})
    answering = Answering(run.judge) if run.answer else None
    for kb in run.kbs:
        t0 = time.monotonic()
        if kb == "turns":
            scores, extra = await _turns(
                settings,
                conversations,
                stamp,
                progress,
                answering,
                run.turn_context,
                run.embed_window,
            )
        else:
            scores, extra = await _facts(run, conversations, stamp, progress, answering)
        rows_kb = [s.row() for s in scores]
        kbs[kb] = {
            "categories": by_category(scores, MODES, "single"),
            "answers": answers.summarize(rows_kb) if answering is not None else None,
            **extra,
            "seconds": round(time.monotonic() - t0, 1),
        }
        rows += [{"kb": kb, **row} for row in rows_kb]
    return {
        "kind": "locomo",
        "run": stamp,
        "data": str(run.data),
        "conversations": [c.id for c in conversations],
        "slice": {
            "sessions": run.sessions,
            "limit": run.limit,
            "turns_per_chunk": run.turns_per_chunk,
            "sessions_kept": {c.id: len(c.sessions) for c in conversations},
            "turns_kept": {c.id: len(c.turns) for c in conversations},
            "questions": sum(len(c.questions) for c in conversations),
        },
        "retrieval": {
            "top_k": max(KS),
            "min_similarity": settings.api.min_similarity,
            "alpha": settings.api.alpha,
            "keyword_forms": settings.api.keyword_forms,
            "drop_common_words": settings.api.drop_common_words,
            "subject_bonus": settings.api.subject_bonus,
            "bm25_b": settings.store.bm25_b,
            "modes": list(MODES),
            "headline_mode": "single",
            "hop_plans": "rules only (no LM)",
            "as_of": "the end of each conversation (its last session kept)",
        },
        "embed_model": settings.embed.model,
        "answers": _answers_how(run, settings),
        "kbs": kbs,
        "seconds": {"wall": round(time.monotonic() - started, 1)},
        "questions": rows,
    }


def _answers_how(run: LocomoRun, settings: Settings) -> dict[str, Any] | None:
    if not run.answer:
        return None
    judge = run.judge
    return {
        "lm": {"url": run.lm_url or settings.lm.url, "model": settings.lm.model},
        "facts": "the single mode's (top 10), answered by QueryEngine.respond",
        "f1": "LoCoMo's token F1 per category, without stemming; 5: abstained",
        "judge": None if judge is None else {"model": judge.lm.model, "prompt": "judge_answer.v1"},
    }


async def _turns(
    settings: Settings,
    conversations: Sequence[Conversation],
    stamp: str,
    progress: Progress,
    answering: Answering | None = None,
    context: int = 0,
    window: EmbedWindow | None = None,
) -> tuple[list[QuestionScore], dict[str, Any]]:
    async with open_clients(settings, CollectorRegistry()) as clients:
        engine = QueryEngine.of(clients, settings)
        return await turns_kb(
            clients.store,
            clients.embedder,
            engine,
            conversations,
            stamp,
            progress,
            answering,
            context,
            window,
        )


async def turns_kb(
    store: FactStore,
    embedder: Embedder,
    engine: QueryEngine,
    conversations: Sequence[Conversation],
    stamp: str,
    progress: Progress,
    answering: Answering | None = None,
    context: int = 0,
    window: EmbedWindow | None = None,
) -> tuple[list[QuestionScore], dict[str, Any]]:
    """Each conversation's turns as passages (each after ``context`` turns said before
    it, its vector from ``window``'s turns) in a namespace of its own, every question
    asked and scored, the namespace dropped; the scores and what was loaded."""
    scores: list[QuestionScore] = []
    passages = 0
    for conversation in conversations:
        namespace = f"eval-locomo-{stamp}-turns-{conversation.id}"
        try:
            progress.stage(f"turns {conversation.id}: loading", 1)
            cited = await load_turns(
                Materializer(store, embedder), conversation, namespace, context, window
            )
            progress.advance(1)
            passages += len(cited)
            provenance = Provenance(cited, {})
            scores += await _ask_all(
                engine, conversation, namespace, provenance, "turns", progress, answering
            )
        finally:
            await store.drop_namespace(namespace)
    window = window or EmbedWindow()
    embed_window = {"before": window.before, "after": window.after}
    return scores, {
        "passages": passages,
        "turn_context": context,
        "embed_window": embed_window,
        "lm": None,
    }


async def _facts(
    run: LocomoRun,
    conversations: Sequence[Conversation],
    stamp: str,
    progress: Progress,
    answering: Answering | None = None,
) -> tuple[list[QuestionScore], dict[str, Any]]:
    tag = f"eval-locomo-{stamp}"
    scores: list[QuestionScore] = []
    detail: dict[str, Any] = {
        "namespaces": {},
        "documents": {},
        "skipped_documents": {},
        "facts_true": {},
    }
    settings = Settings.from_env(kb_facts.worker_env(tag, 0, run.lm_url))
    log = settings.local.cache_dir / "logs" / f"{tag}-worker.log"
    ingest_s = 0.0
    rate = kb_facts.IngestRate()
    with kb_facts.running_worker(tag, run.lm_url, log) as worker:
        await kb_facts.start(worker)
        async with open_clients(worker.settings, CollectorRegistry()) as clients:
            for conversation in conversations:
                namespace = f"{tag}-facts-{conversation.id}"
                documents = conversation_documents(conversation, namespace, run.turns_per_chunk)
                path = kb_facts.write_documents(
                    run.out / f"locomo-{stamp}" / f"{conversation.id}-documents.jsonl",
                    [d for d, _ in documents],
                )
                ids = [d.id for d, _ in documents]
                progress.stage(f"facts {conversation.id}: documents", len(ids))
                t0 = time.monotonic()
                skipped = await worker.publish_and_wait(
                    clients, path, namespace, ids, rate.ticker(progress.advance), run.timeout_s
                )
                ingest_s += time.monotonic() - t0
                await rate.bound(clients.embedder, [d.text for d, _ in documents])
                detail["namespaces"][conversation.id] = namespace
                detail["documents"][conversation.id] = len(ids)
                detail["skipped_documents"][conversation.id] = skipped
                counts = await clients.store.count_facts(namespace)
                detail["facts_true"][conversation.id] = counts.true
                provenance = Provenance({}, {d.id: turns for d, turns in documents})
                engine = QueryEngine.of(clients, worker.settings)
                scores += await _ask_all(
                    engine, conversation, namespace, provenance, "facts", progress, answering
                )
    detail.update(
        lm={"url": worker.settings.lm.url, "model": worker.settings.lm.model},
        worker_log=str(log),
        ingest_seconds=round(ingest_s, 1),
        documents_per_second=_rate(sum(detail["documents"].values()), ingest_s),
        ingest_rate=rate.summary(),
        provenance=_provenance_kinds(scores),
    )
    return scores, detail


def _rate(count: int, seconds: float) -> float | None:
    return round(count / seconds, 3) if seconds > 0 else None


def _provenance_kinds(scores: Sequence[QuestionScore]) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for score in scores:
        for kind in score.detail.get("provenance", []):
            kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


async def _ask_all(
    engine: QueryEngine,
    conversation: Conversation,
    namespace: str,
    provenance: Provenance,
    kb: Kb,
    progress: Progress,
    answering: Answering | None = None,
) -> list[QuestionScore]:
    limit = asyncio.Semaphore(_CONCURRENT_QUESTIONS)
    progress.stage(f"{kb} {conversation.id}: questions", len(conversation.questions))

    async def one(question: Question) -> QuestionScore:
        async with limit:
            score = await _score(
                engine, conversation, namespace, provenance, kb, question, answering
            )
        progress.advance(1)
        return score

    return list(await asyncio.gather(*(one(q) for q in conversation.questions)))


async def _score(
    engine: QueryEngine,
    conversation: Conversation,
    namespace: str,
    provenance: Provenance,
    kb: Kb,
    question: Question,
    answering: Answering | None = None,
) -> QuestionScore:
    evidence = tuple(t for t in question.evidence if t in conversation.turns)
    score = QuestionScore(
        conversation.id, question.category, question.text, question.answer, evidence
    )
    if not evidence:
        return score
    kinds: set[str] = set()
    top: list[tuple[Fact, tuple[str, ...]]] = []
    single: tuple[AskRequest, Gathered] | None = None
    for mode in MODES:
        request = AskRequest(
            question.text, namespace, as_of=conversation.end, top_k=max(KS), mode=mode
        )
        gathered = await engine.gather(request, lm_plans=False)
        cited = []
        for used in gathered.facts:
            turns, kind = provenance.turns(used.fact)
            cited.append(set(turns))
            kinds.add(kind)
            if mode == "single":
                top.append((used.fact, turns))
        score.recall[mode] = {k: recall_at(evidence, cited, k) for k in KS}
        score.detail[f"{mode}_used"] = gathered.mode
        if mode == "single":
            score.detail["valid_time"] = gathered.valid_time.describe()
            single = (request, gathered)
    score.detail["provenance"] = sorted(kinds)
    if answering is not None and single is not None:
        await _answer(engine, *single, score, answering)
    if question.category == TEMPORAL and question.answer is not None:
        _score_time(score, conversation, question, kb, top)
    return score


async def _answer(
    engine: QueryEngine,
    request: AskRequest,
    gathered: Gathered,
    score: QuestionScore,
    answering: Answering,
) -> None:
    """The query agent's answer from the single mode's facts, scored (and judged)."""
    try:
        score.predicted = (await engine.respond(request, gathered)).answer
    except FactstreamError as exc:  # an invalid answer scores 0, counted as failed
        score.answer_error = f"{type(exc).__name__}: {exc}"
        score.predicted = ""
    score.answer_score = answers.score_answer(score.category, score.predicted, score.answer)
    if answering.judge is None or score.category == answers.ADVERSARIAL or not score.answer:
        return
    try:
        score.judge_correct = await answers.judge(
            answering.judge, score.question, score.answer, score.predicted
        )
    except FactstreamError as exc:
        score.detail["judge_error"] = f"{type(exc).__name__}: {exc}"


def _score_time(
    score: QuestionScore,
    conversation: Conversation,
    question: Question,
    kb: Kb,
    top: Sequence[tuple[Fact, tuple[str, ...]]],
) -> None:
    assert question.answer is not None  # noqa: S101 - checked by the caller
    gold = gold_interval(question.answer)
    score.time_word = any(mentions_time(conversation.turns[t].said) for t in score.evidence)
    if gold is None:
        score.detail["gold_time"] = None
        return
    score.detail["gold_time"] = {
        "interval": gold.interval.describe(),
        "granularity": gold.granularity,
    }
    if kb == "turns":
        reading = read_evidence(conversation, question)
        score.time = reading is not None and resolved_within(reading.interval, gold.interval)
        if reading is not None:
            score.detail["read"] = {
                "turn": reading.turn,
                "expression": reading.expression,
                "interval": reading.interval.describe(),
            }
        return
    # Facts: the first retrieved fact that cites an evidence turn; its valid time's start.
    for fact, turns in top:
        if set(turns) & set(score.evidence):
            start = fact.valid_from or fact.first_seen
            score.time = resolved_within(at(start), gold.interval)
            score.detail["read"] = {"fact": fact.text, "valid_from": start.isoformat()}
            return
    score.time = False
