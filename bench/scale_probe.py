"""What the scale-out benchmark (bench/scale.py) reads of its workers and its input.

Per worker, from its /metrics: documents handled, LM calls, the seconds its LM calls took
(``factstream_lm_request_seconds``, the wait for a free LM slot included), seconds per
editing stage, and the documents partitions it processed (``factstream_consumer_lag`` has a
sample per partition processed since it was assigned, removed when it is revoked). From
the workers' logs: the consumer group generations joined (one per completed rebalance).
From the documents' keys: how they spread over the partitions (the deployment's placement
map, else the producers' murmur2), and the placement map the planner proposes for them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.scrape import scrape
from factstream.placement.planner import plan
from factstream.streams.placement import Placement
from factstream.topics.records import Document

__all__ = [
    "WorkerSnap",
    "planned",
    "bound",
    "generations",
    "rebalances",
    "snap",
    "spread",
    "worker_figures",
]

_GENERATION = re.compile(r"Joined group '[^']+' \(generation (\d+)\)")


@dataclass(frozen=True)
class WorkerSnap:
    """One worker's counters at one moment (zeros while its /metrics is not up)."""

    docs: float = 0.0
    lm_calls: float = 0.0
    lm_seconds: float = 0.0
    redecisions: float = 0.0
    partitions: tuple[int, ...] = ()
    stages: dict[str, float] = field(default_factory=dict)


async def snap(port: int) -> WorkerSnap:
    """The worker's counters now, read from its /metrics on ``port``."""
    try:
        s = await scrape(port)
    except httpx.HTTPError:  # its /metrics is not up yet: it handled nothing
        return WorkerSnap()
    lag = s.by_label("factstream_consumer_lag", "partition")
    return WorkerSnap(
        docs=s.total("factstream_documents_total"),
        lm_calls=s.total("factstream_lm_requests_total"),
        lm_seconds=s.total("factstream_lm_request_seconds_sum"),
        redecisions=s.total("factstream_redecisions_total"),
        partitions=tuple(sorted(int(p) for p in lag)),
        stages=s.by_label("factstream_stage_seconds_sum", "stage"),
    )


def generations(workdir: Path) -> list[list[int]]:
    """Per worker log (worker-*.log, in name order): the group generations it joined."""
    return [
        [int(g) for g in _GENERATION.findall(log.read_text(errors="replace"))]
        for log in sorted(workdir.glob("worker-*.log"))
    ]


def rebalances(joined: list[list[int]]) -> int:
    """Completed rebalances: the distinct generations any worker joined."""
    return len({g for gs in joined for g in gs})


def spread(
    docs: Sequence[Document], partitions: int, placement: Placement | None = None
) -> list[int]:
    """Documents per partition, placed as the publishers place them (``placement``, else
    hashed by namespace)."""
    where = placement or Placement()
    counts = Counter(where.partition(d.namespace, partitions) for d in docs)
    return [counts.get(p, 0) for p in range(partitions)]


def planned(docs: Sequence[Document], partitions: int) -> Placement:
    """The map ``factstream placement plan`` proposes for these documents' volume (nothing
    placed yet): what an operator of the deployment would write before they go live."""
    return plan(Counter(d.namespace for d in docs), partitions).placement


def worker_figures(
    before: WorkerSnap, after: WorkerSnap, span_s: float, latency_ms: float
) -> dict[str, Any]:
    """One worker's timed stretch: documents, docs/s over its own span (publish to its last
    document), LM calls, their mean number in flight (calls x the stub's latency / span),
    the mean wait per call for a free LM slot, seconds per stage, partitions."""
    docs, calls = after.docs - before.docs, after.lm_calls - before.lm_calls
    waited = after.lm_seconds - before.lm_seconds - calls * latency_ms / 1000
    stages = {k: round(v - before.stages.get(k, 0.0), 2) for k, v in after.stages.items()}
    return {
        "documents": round(docs),
        "span_s": round(span_s, 2),
        "docs_per_s": round(docs / span_s, 3) if span_s > 0 else 0.0,
        "lm_calls": round(calls),
        "lm_mean_in_flight": round(calls * latency_ms / 1000 / span_s, 2) if span_s > 0 else 0.0,
        "lm_slot_wait_s_per_call": round(waited / calls, 3) if calls else 0.0,
        "redecisions": round(after.redecisions - before.redecisions),
        "stage_seconds": stages,
        "partitions": list(after.partitions),
    }


def bound(per_worker: Sequence[dict[str, Any]], latency_ms: float, concurrency: int) -> float:
    """Seconds the LM alone needs: the busiest worker's LM calls at ``concurrency`` at once."""
    busiest: int = max(w["lm_calls"] for w in per_worker)
    return busiest * latency_ms / 1000 / concurrency
