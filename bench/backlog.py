"""Benchmark 5: backlog drain: a worker works off queued documents with the zero-latency LM.

The documents (CLARK-News in rounds, bench.corpus) are published to a fresh topic prefix
before the worker starts; a real `factstream worker` subprocess then drains them while the
group's lag (end offsets minus committed offsets) is sampled every second and plotted.
Documents by outcome come from the worker's own /metrics.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from bench.corpus import load, stream_documents, stub_rules
from bench.harness import Deployment
from bench.lag import LagReader
from bench.plot import plot_lag
from bench.sizes import Size
from factstream.config import Settings
from factstream_lab.stack.process import free_port

__all__ = ["run"]


def _outcomes(metrics_port: int) -> dict[str, int]:
    text = httpx.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5).text
    found: dict[str, int] = {}
    for family in text_string_to_metric_families(text):
        if family.name == "factstream_documents":
            for sample in family.samples:
                if sample.name.endswith("_total"):
                    found[sample.labels["outcome"]] = int(sample.value)
    return found


def _rate_between(samples: list[tuple[float, int]], total: int) -> float | None:
    """Documents/s while the lag fell from 90% to 10% of the backlog (startup excluded)."""
    hi = next((t for t, lag in samples if lag <= 0.9 * total), None)
    lo = next((t for t, lag in samples if lag <= 0.1 * total), None)
    if hi is None or lo is None or lo <= hi:
        return None
    return 0.8 * total / (lo - hi)


async def run(base: Settings, size: Size, workdir: Path, data: Path, plot: Path) -> dict[str, Any]:
    """Queue ``size.backlog_docs`` documents, start a worker, time the drain, plot the lag."""
    clark = load(data)
    metrics_port = free_port()
    dep = Deployment(
        base, workdir / "backlog", stub=True, FACTSTREAM_WORKER_METRICS_PORT=str(metrics_port)
    )
    try:
        dep.start_stub(stub_rules(clark))
        await dep.create_topics()
        names = [f"bl{i}" for i in range(size.backlog_namespaces)]
        docs = stream_documents(clark, size.backlog_docs, names)
        published = time.monotonic()
        await dep.publish(docs)
        publish_s = time.monotonic() - published
        samples: list[tuple[float, int]] = []
        async with LagReader(dep) as reader:
            started = time.monotonic()
            dep.start_worker()
            drained = await reader.wait_drained(
                timeout_s=max(600.0, size.backlog_docs),
                sample=lambda t, lag: samples.append((t - started, lag)),
            )
        outcomes = _outcomes(metrics_port)
    finally:
        await dep.close()
    first_commit = next((t for t, lag in samples if lag < len(docs)), None)
    plot_lag(samples, plot, f"Backlog drain: {len(docs)} documents, {len(names)} namespaces")
    total_s = drained - started
    steady = _rate_between(samples, len(docs))
    return {
        "documents": len(docs),
        "namespaces": len(names),
        "partitions": dep.settings.worker.partitions,
        "publish_s": round(publish_s, 1),
        "drain_s": round(total_s, 1),
        "first_commit_s": round(first_commit, 1) if first_commit is not None else None,
        "docs_per_s": round(len(docs) / total_s, 2),
        "steady_docs_per_s": round(steady, 2) if steady is not None else None,
        "outcomes": outcomes,
        "lag_samples": [[round(t, 1), lag] for t, lag in samples],
        "plot": plot.name,
    }
