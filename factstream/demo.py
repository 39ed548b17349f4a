"""`factstream demo`: the main job on real services, end to end.

Starts a worker, publishes a slice of CLARK-News into a fresh namespace, waits until every
document is edited in, then shows the facts with their histories and the edits by op.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from factstream.agents.publish import PublishReport, publish_file, read_documents
from factstream.config import Settings
from factstream.store.weaviate_store import WeaviateFactStore
from factstream.streams.changelog import read_changelog
from factstream.topics.records import Fact

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


async def _wait_applied(
    settings: Settings,
    namespace: str,
    ids: list[str],
    tick: Callable[[int], None],
    timeout_s: float,
) -> None:
    store = await WeaviateFactStore.open(settings.weaviate, settings.store)
    try:
        deadline, pending = time.monotonic() + timeout_s, list(ids)
        while pending:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(pending)} documents not edited in after {timeout_s:.0f}s")
            done = [i for i in pending if await store.applied_batch(namespace, i) is not None]
            if done:
                tick(len(done))
                pending = [i for i in pending if i not in done]
            else:
                await asyncio.sleep(0.5)
    finally:
        await store.close()


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


def _start_worker(log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(  # noqa: S603 - our own CLI
            [sys.executable, "-m", "factstream", "worker"],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(os.environ),
        )


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
    worker = _start_worker(log)
    try:
        report = await publish_file(data, settings.kafka, settings.worker, namespace=namespace)
        ids = [d.id for d in read_documents(data, PublishReport(), namespace)]
        await _wait_applied(settings, namespace, ids, tick, timeout_s)
    finally:
        worker.send_signal(signal.SIGTERM)
        worker.wait(timeout=60)
    facts, ops = await _results(settings, namespace)
    return DemoResult(namespace, report, facts, ops, time.monotonic() - started, log)
