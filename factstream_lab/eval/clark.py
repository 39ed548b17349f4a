"""`factstream eval clark` and `eval convo`: the ERASE paper's protocol on the real stack.

Both run it on files of CLARK-News' format: CLARK-News itself (``kind`` clark), or a
generated world of conversations (``kind`` convo, :mod:`factstream_lab.world`), whose chunks go
in with their turns.

One run per method, each in a fresh namespace on its own topics (prefix), worked by a real
`factstream worker` process started with ``FACTSTREAM_EDITOR_METHOD``: documents are
published to Kafka in timestamp order up to each checkpoint; once the worker has edited
them in, the checkpoint's questions go to the query engine the API uses (multiple choice
over every answer the question ever has) and are scored by exact match.

Reruns are cheap: the LM response cache answers every call already made (same documents,
same retrieval, same prompts), and its tokens are still counted, as first spent.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import httpx
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from factstream.ask.query import AskRequest, QueryEngine
from factstream.clients import Clients, open_clients
from factstream.config import Settings
from factstream.errors import FactstreamError
from factstream.ops.waiting import wait_applied
from factstream.streams.admin import ensure_topics
from factstream.streams.changelog import ChangelogPublisher
from factstream.topics.records import Document, Turn
from factstream_lab.eval.datasets import ClarkDocument, load_clark
from factstream_lab.eval.protocol import (
    Checkpoint,
    ClarkQuestion,
    load_questions,
    schedule,
    score,
    truncate,
)
from factstream_lab.eval.report import tokens_by_task, total_tokens
from factstream_lab.eval.skipped import skipped_documents
from factstream_lab.stack.process import free_port
from factstream_lab.up import Part, start_part, stop_parts

__all__ = ["METHODS", "ChoiceAsker", "ClarkRun", "Method", "Progress", "run_clark"]

Method = Literal["erase", "fact-rag", "rag"]
METHODS: tuple[Method, ...] = ("erase", "fact-rag", "rag")


class Progress:
    """Where a run reports progress (the CLI draws bars; tests ignore it)."""

    def stage(self, name: str, total: int) -> None:
        """A new stage of ``total`` steps begins."""

    def advance(self, steps: int) -> None:
        """``steps`` more steps of the current stage are done."""


@dataclass(frozen=True)
class ClarkRun:
    """One evaluation run's inputs."""

    data: Path
    method: Method
    out: Path
    limit: int | None = None  # stream only the first N documents (and what they reveal)
    seed: int = 0
    lm_url: str | None = None
    timeout_s: float = 6 * 3600  # for the worker to edit in one checkpoint's documents
    kind: Literal["clark", "convo"] = "clark"  # the data: CLARK-News or a generated world


@dataclass(frozen=True)
class _Names:
    stamp: str
    namespace: str
    env: dict[str, str]


def _names(run: ClarkRun, metrics_port: int) -> _Names:
    stamp = f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{run.method}"
    tag = f"eval-{run.kind}-{stamp}"
    env = {
        "FACTSTREAM_KAFKA_TOPIC_PREFIX": f"{tag}.",
        "FACTSTREAM_WORKER_APP_ID": tag,
        "FACTSTREAM_WORKER_PARTITIONS": "1",  # one namespace: one partition does the work
        "FACTSTREAM_WORKER_METRICS_PORT": str(metrics_port),
        "FACTSTREAM_WORKER_METRICS_HOST": "127.0.0.1",
        "FACTSTREAM_EDITOR_METHOD": run.method,
    }
    if run.lm_url:
        env["FACTSTREAM_LM_URL"] = run.lm_url
    return _Names(stamp, tag, env)


def _documents(run: ClarkRun, namespace: str) -> list[Document]:
    clark = load_clark(run.data)
    ordered: list[ClarkDocument] = sorted(clark.documents.values(), key=lambda d: d.position)
    if run.limit is not None:
        ordered = ordered[: run.limit]
    return [
        Document(
            id=d.id,
            namespace=namespace,
            kind=d.kind,  # validated: article or conversation
            text=d.text,
            timestamp=d.timestamp,
            turns=[Turn(speaker=s, text=t) for s, t in d.turns] or None,
        )
        for d in ordered
    ]


def _questions(run: ClarkRun, documents: Sequence[Document]) -> list[ClarkQuestion]:
    questions = load_questions(run.data / "questions.jsonl")
    if run.limit is not None and documents:
        questions = truncate(questions, documents[-1].timestamp)
    return questions


async def _scrape_tokens(port: int) -> dict[str, dict[str, int]]:
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.get(f"http://127.0.0.1:{port}/metrics")
        response.raise_for_status()
    return tokens_by_task(text_string_to_metric_families(response.text))


class ChoiceAsker:
    """Asks multiple-choice questions through the query engine, a few at a time."""

    def __init__(self, clients: Clients, settings: Settings, namespace: str) -> None:
        self.clients, self.namespace = clients, namespace
        self.engine = QueryEngine.of(clients, settings)
        self.limit = asyncio.Semaphore(settings.lm.max_concurrency)

    async def ask(
        self, question: str, choices: Sequence[str], *, valid_time: bool = True
    ) -> tuple[str | None, str | None]:
        """The chosen answer, or None and why it failed (an invalid LM answer counts wrong).

        ``valid_time=False`` retrieves without any valid-time filter (reads before valid
        time, as a plain RAG does).
        """
        request = AskRequest(question, self.namespace, choices=choices)
        async with self.limit:
            try:
                if valid_time:
                    return (await self.engine.ask(request)).answer, None
                facts = await self.engine.retrieve(request, question_time=False)
                return (await self.engine.answer(request, facts)).answer, None
            except FactstreamError as exc:
                return None, f"{type(exc).__name__}: {exc}"


async def _ask_checkpoint(
    asker: ChoiceAsker,
    questions: Sequence[ClarkQuestion],
    cp: Checkpoint,
    progress: Progress,
) -> list[dict[str, Any]]:
    progress.stage(f"questions at {cp.share:.0%}", len(cp.asked))

    async def one(index: int) -> dict[str, Any]:
        q = questions[index]
        predicted, error = await asker.ask(q.question, q.choices)
        progress.advance(1)
        expected = q.answer_at(cp.time)
        return {
            "share": cp.share,
            "index": index,
            "question": q.question,
            "changed": index in cp.changed,
            "updates": cp.updates[index],
            "expected": expected,
            "predicted": predicted,
            "correct": predicted == expected,
            "error": error,
        }

    return list(await asyncio.gather(*(one(i) for i in cp.asked)))


async def _publish(publisher: ChangelogPublisher, docs: Sequence[Document]) -> None:
    for start in range(0, len(docs), 200):
        await publisher.publish_documents(list(docs[start : start + 200]))


async def run_clark(run: ClarkRun, progress: Progress | None = None) -> dict[str, Any]:
    """Run the protocol for ``run.method``; returns the results (the CLI writes them)."""
    progress = progress or Progress()
    started = time.monotonic()
    metrics_port = free_port()
    names = _names(run, metrics_port)
    settings = Settings.from_env(names.env)  # the worker child gets the same names.env
    documents = _documents(run, names.namespace)
    questions = _questions(run, documents)
    checkpoints = schedule(questions, seed=run.seed)
    log = settings.local.cache_dir / "logs" / f"{names.namespace}-worker.log"
    await ensure_topics(settings.kafka, settings.worker)
    worker = Part("worker", [sys.executable, "-m", "factstream", "worker"], log, "", env=names.env)
    publisher = ChangelogPublisher(settings.kafka, client_id=f"{names.namespace}-publish")
    answers: list[dict[str, Any]] = []
    checkpoint_rows: list[dict[str, Any]] = []
    ingest_s = ask_s = 0.0
    async with open_clients(settings, CollectorRegistry()) as clients:
        try:
            start_part(worker)
            await publisher.start()
            asker, sent = ChoiceAsker(clients, settings, names.namespace), 0
            for cp in checkpoints:
                due = [d for d in documents[sent:] if d.timestamp <= cp.time]
                progress.stage(f"documents to {cp.share:.0%}", len(due))
                t0 = time.monotonic()
                await _publish(publisher, due)
                await wait_applied(
                    clients.store,
                    names.namespace,
                    [d.id for d in due],
                    progress.advance,
                    run.timeout_s,
                    alive=worker.alive,
                    settled=lambda: skipped_documents(settings.kafka),
                )
                sent += len(due)
                t1 = time.monotonic()
                rows = await _ask_checkpoint(asker, questions, cp, progress)
                ingest_s, ask_s = ingest_s + t1 - t0, ask_s + time.monotonic() - t1
                answers += rows
                checkpoint_rows.append(_checkpoint_row(cp, sent, rows))
            ingest_tokens = await _scrape_tokens(metrics_port)
            skipped = await skipped_documents(settings.kafka)
        finally:
            await publisher.stop()
            stop_parts([worker], grace_s=60)
            ask_tokens = tokens_by_task(clients.metrics.registry.collect())
    predictions = {(a["share"], a["index"]): a["predicted"] for a in answers}
    scored = score(questions, checkpoints, predictions)
    return {
        "kind": run.kind,
        "method": run.method,
        "run": names.stamp,
        "namespace": names.namespace,
        "data": str(run.data),
        "limit": run.limit,
        "seed": run.seed,
        "lm": {"url": settings.lm.url, "model": settings.lm.model},
        "documents": sent,
        "questions": len(questions),
        "asked": scored.asked,
        "correct": scored.correct,
        "accuracy": scored.correct / scored.asked if scored.asked else None,
        # Picking uniformly among the choices would score this (yes/no questions: half).
        "chance": _chance(questions, checkpoints),
        "checkpoints": checkpoint_rows,
        "per_updates": scored.per_updates,
        "tokens": {
            "ingest": ingest_tokens,
            "ask": ask_tokens,
            "total": total_tokens(ingest_tokens) + total_tokens(ask_tokens),
        },
        "seconds": {
            "ingest": round(ingest_s, 1),
            "ask": round(ask_s, 1),
            "wall": round(time.monotonic() - started, 1),
        },
        "failed_answers": sum(a["error"] is not None for a in answers),
        # Documents the worker settled without edits: id -> dead_letter or review.
        "skipped_documents": skipped,
        "worker_log": str(log),
        "answers": answers,
    }


def _chance(questions: Sequence[ClarkQuestion], checkpoints: Sequence[Checkpoint]) -> float | None:
    asked = [questions[i] for cp in checkpoints for i in cp.asked]
    return sum(1 / len(q.choices) for q in asked) / len(asked) if asked else None


def _checkpoint_row(
    cp: Checkpoint, documents: int, rows: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    correct = sum(r["correct"] for r in rows)
    return {
        "share": cp.share,
        "time": cp.time.isoformat(),
        "documents": documents,
        "asked": len(rows),
        "changed": len(cp.changed),
        "unchanged": len(cp.unchanged),
        "correct": correct,
        "accuracy": correct / len(rows) if rows else None,
    }
