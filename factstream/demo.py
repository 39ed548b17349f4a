"""`factstream demo`: the main job on real services, end to end.

Starts a worker, publishes a slice of CLARK-News into a fresh namespace, waits until every
document is edited in, then shows the facts with their histories and the edits by op.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from factstream.config import Settings
from factstream.ops.publish import PublishReport, publish_file, read_documents
from factstream.ops.waiting import wait_applied
from factstream.store.weaviate_store import WeaviateFactStore
from factstream.streams.changelog import read_changelog
from factstream.topics.records import Fact
from factstream.up import Part, start_part, stop_parts

__all__ = ["DEFAULT_DEMO_DATA", "DemoResult", "run_demo"]

DEFAULT_DEMO_DATA = Path(__file__).resolve().parents[1] / "deploy" / "demo" / "clark-news-40.jsonl"


@dataclass(frozen=True)
class DemoResult:
    namespace: str
    published: PublishReport
    facts: list[Fact]
    ops: Counter[str]
    seconds: float
    worker_log: Path


async def _results(settings: Settings, namespace: str) -> tuple[list[Fact], Counter[str]]:
    store = await WeaviateFactStore.open(settings.weaviate, settings.store)
    try:
        facts = (await store.list_facts(namespace, include_false=True, limit=1000)).facts
    finally:
        await store.close()
    ops = Counter(
        [e.op.value async for e in read_changelog(settings.kafka) if e.namespace == namespace]
    )
    return facts, ops


async def run_demo(
    settings: Settings,
    data: Path,
    namespace: str,
    tick: Callable[[int], None],
    timeout_s: float = 1800,
) -> DemoResult:
    """Run the worker on ``data`` (published into ``namespace``) and collect the results."""
    started = time.monotonic()
    log = settings.local.cache_dir / "logs" / "demo-worker.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    worker = start_part(Part("worker", [sys.executable, "-m", "factstream", "worker"], log, ""))
    store = await WeaviateFactStore.open(settings.weaviate, settings.store)
    try:
        report = await publish_file(data, settings.kafka, settings.worker, namespace=namespace)
        ids = [d.id for d in read_documents(data, PublishReport(), namespace)]
        await wait_applied(store, namespace, ids, tick, timeout_s, alive=worker.alive)
    finally:
        await store.close()
        stop_parts([worker], grace_s=60)
    facts, ops = await _results(settings, namespace)
    return DemoResult(namespace, report, facts, ops, time.monotonic() - started, log)
