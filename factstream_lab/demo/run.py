"""`factstream demo`: the main job on real services, end to end.

Starts a worker, publishes a slice of CLARK-News into a fresh namespace, waits until every
document is edited in, then tells the story (``demo_story``): the facts with their
histories, one fact whose truth changed and one question asked before and after it, the
share of facts the grounding check kept, and the audit of the kept facts
(``eval.grounding_audit``). Beside the worker the PostgreSQL mirror follows the namespace
(``demo_mirror``); at the end it is caught up and checked against the knowledge base. The
summary (``demo.summary``) says what became of every document, why each dead letter failed,
and what the LM calls cost. ``DemoResult.to_json`` is the results file
(results/demo/clark-news-40.json); the demo process logs to a file (``log_to_file``), never
to the terminal.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from factstream.ask.query import QueryEngine
from factstream.clients import open_clients
from factstream.config import Settings
from factstream.mirror.store import RoundResult
from factstream.ops.dead_letters import Letter, read_letters
from factstream.ops.publish import PublishReport, publish_file, read_documents
from factstream.ops.waiting import WorkerGone
from factstream.store.base import FactStore
from factstream.store.weaviate_store import WeaviateFactStore
from factstream.streams.changelog import read_changelog
from factstream.topics.records import Document, Fact, FactEdit
from factstream_lab.demo.mirror import DemoMirror, MirrorCheck
from factstream_lab.demo.story import (
    Story,
    ask_before_and_after,
    find_change,
    grounding_from_metrics,
    lm_calls_from_metrics,
    metric_counts,
    question_for,
    refused_changes_from_metrics,
)
from factstream_lab.demo.summary import LMFigures, dead_letter_json, lm_figures_from_metrics
from factstream_lab.eval.grounding_audit import AuditReport, audit_edits
from factstream_lab.stack.process import free_port
from factstream_lab.up import Part, start_part, stop_parts

__all__ = ["DEFAULT_DEMO_DATA", "DemoResult", "log_to_file", "run_demo", "tell", "wait_processed"]

DEFAULT_DEMO_DATA = Path(__file__).resolve().parents[2] / "deploy" / "demo" / "clark-news-40.jsonl"
_LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


@dataclass(frozen=True)
class DemoResult:
    namespace: str
    published: PublishReport
    facts: list[Fact]
    edits: list[FactEdit]
    ops: Counter[str]
    seconds: float
    worker_log: Path
    story: Story
    audit: AuditReport
    timings: dict[str, float] = field(default_factory=dict)
    lm_calls: dict[str, int] = field(default_factory=dict)
    outcomes: dict[str, int] = field(default_factory=dict)
    mirror: MirrorCheck | None = None
    dead_letters: list[Letter] = field(default_factory=list)
    lm: LMFigures = field(default_factory=LMFigures)

    def to_json(self, model: str, data: Path) -> dict[str, Any]:
        """The figures of this run, as the results file keeps them."""
        return {
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "model": model,
            "data": data.name,
            "namespace": self.namespace,
            "documents": self.published.published,
            "seconds": round(self.seconds, 1),
            "timings": {step: round(s, 1) for step, s in self.timings.items()},
            "facts": len(self.facts),
            "facts_true": sum(f.truth for f in self.facts),
            "edits_by_op": dict(sorted(self.ops.items())),
            "worker_lm_calls": self.lm_calls,
            "worker_lm": self.lm.to_json(self.published.published),
            "document_outcomes": self.outcomes,
            "dead_letters": dead_letter_json(self.dead_letters),
            "dead_letter_causes": dict(Counter(d.cause for d in self.dead_letters)),
            "story": self.story.to_json(),
            "audit": self.audit.to_json(),
            "mirror": None if self.mirror is None else self.mirror.to_json(),
        }


async def _edits(settings: Settings, namespace: str) -> list[FactEdit]:
    return [e async for e in read_changelog(settings.kafka) if e.namespace == namespace]


async def _facts(settings: Settings, namespace: str) -> list[Fact]:
    store = await WeaviateFactStore.open(settings.weaviate, settings.store)
    try:
        return (await store.list_facts(namespace, include_false=True, limit=1000)).facts
    finally:
        await store.close()


def _outcomes(metrics: str) -> dict[str, int]:
    """The worker's documents by outcome (applied, empty, dead_letter ...)."""
    return metric_counts(metrics, "factstream_documents_total", "outcome")


async def wait_processed(
    store: FactStore,
    namespace: str,
    ids: list[str],
    tick: Callable[[int], None],
    timeout_s: float,
    worker: Part,
    port: int,
) -> str:
    """Until the worker has an outcome for every document; its last /metrics text.

    Applied and empty documents are seen in the store; a dead-lettered one has no batch
    there, so the worker's outcome counter says when every document is through.
    """
    deadline, pending = time.monotonic() + timeout_s, list(ids)
    while True:
        done = {i for i in pending if await store.applied_batch(namespace, i) is not None}
        if done:
            tick(len(done))
            pending = [i for i in pending if i not in done]
        metrics = _scrape(port)
        if not pending or sum(_outcomes(metrics).values()) >= len(ids):
            tick(len(pending))
            return metrics
        if not worker.alive():
            raise WorkerGone(f"the worker exited with {len(pending)} documents not edited in")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(pending)} documents not edited in after {timeout_s:.0f}s")
        await asyncio.sleep(0.5)


def _scrape(port: int) -> str:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    except httpx.HTTPError:
        return ""


async def _story(
    settings: Settings,
    namespace: str,
    edits: list[FactEdit],
    documents: dict[str, Document],
    metrics: str,
) -> Story:
    change = find_change(edits, documents)
    grounding, refused = grounding_from_metrics(metrics), refused_changes_from_metrics(metrics)
    if change is None:
        return Story(None, None, None, None, grounding, refused)
    question = question_for(change)
    async with open_clients(settings) as clients:
        engine = QueryEngine.of(clients, settings)
        before, after = await ask_before_and_after(
            engine, namespace, question, change.document.timestamp
        )
    return Story(change, question, before, after, grounding, refused)


async def run_demo(
    settings: Settings,
    data: Path,
    namespace: str,
    tick: Callable[[int], None],
    timeout_s: float = 1800,
    on_mirror: Callable[[RoundResult, int], None] | None = None,
) -> DemoResult:
    """Run the worker on ``data`` (published into ``namespace``), collect and tell the results.

    The PostgreSQL mirror (``settings.postgres``) follows ``namespace`` beside the worker;
    ``on_mirror`` is called after each round it writes, with the lag after it.
    """
    started = time.monotonic()
    timings: dict[str, float] = {}
    log = settings.local.cache_dir / "logs" / "demo-worker.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    port = free_port()  # a worker of its own: its counters are this run's
    env = {"FACTSTREAM_WORKER_METRICS_PORT": str(port)}
    argv = [sys.executable, "-m", "factstream", "worker"]
    mirror = DemoMirror(settings, namespace, on_round=on_mirror)
    await mirror.start()
    worker = start_part(Part("worker", argv, log, "", env))
    store = await WeaviateFactStore.open(settings.weaviate, settings.store)
    metrics = ""
    try:
        report = await publish_file(data, settings.kafka, settings.worker, namespace=namespace)
        timings["publish"] = time.monotonic() - started
        documents = {d.id: d for d in read_documents(data, PublishReport(), namespace)}
        metrics = await wait_processed(
            store, namespace, list(documents), tick, timeout_s, worker, port
        )
        timings["edit"] = time.monotonic() - started - timings["publish"]
    except BaseException:
        await mirror.stop()
        raise
    finally:
        await store.close()
        stop_parts([worker], grace_s=60)
    mark = time.monotonic()
    await mirror.finish()  # the worker is gone: caught up to the changelog's end
    timings["mirror_catch_up"] = time.monotonic() - mark
    result = await tell(settings, namespace, documents, metrics, report, started, timings, log)
    check = await mirror.check(result.facts, result.edits)
    return replace(result, mirror=check)


async def tell(
    settings: Settings,
    namespace: str,
    documents: dict[str, Document],
    metrics: str,
    report: PublishReport,
    started: float,
    timings: dict[str, float],
    log: Path,
) -> DemoResult:
    """The results of a namespace the demo's worker edited: the facts, story and audit.

    ``metrics`` is the worker's /metrics text once every document was through;
    ``started`` the monotonic time the run began.
    """
    edits, facts = await _edits(settings, namespace), await _facts(settings, namespace)
    ops = Counter(e.op.value for e in edits)
    mark = time.monotonic()
    story = await _story(settings, namespace, edits, documents, metrics)
    timings["story"] = time.monotonic() - mark
    audit = audit_edits(edits, documents)
    seconds = time.monotonic() - started
    calls, outcomes = lm_calls_from_metrics(metrics), _outcomes(metrics)
    letters = await read_letters(settings.kafka, namespace)
    return DemoResult(
        namespace,
        report,
        facts,
        edits,
        ops,
        seconds,
        log,
        story,
        audit,
        timings,
        calls,
        outcomes,
        dead_letters=letters,
        lm=lm_figures_from_metrics(metrics),
    )


def log_to_file(path: Path) -> Path:
    """Send the demo process's log records, and Python's warnings, to ``path``, not the
    terminal: the terminal shows the demo's progress and results, while the libraries'
    warnings (aiokafka's NotLeaderForPartition while a new topic elects its leaders, ...)
    are kept in the file. Returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter(_LOG_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    logging.captureWarnings(True)
    return path
