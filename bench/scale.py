"""Benchmark 8 (issue 25): documents/s with 1, 2 and 3 workers in one consumer group.

CLARK-News documents (stated, bench.corpus) spread over ``--namespaces`` namespaces (96 by
default: 8 per partition, so the namespace keys' hashing spreads them) go through N real
`factstream worker` processes of one group (real Kafka, Weaviate) over ``--partitions``
documents partitions (12, as deploy/k8s runs 3 workers). The LM is the deterministic stub
with a fixed latency per call and no limit of its own. Each worker may have
``FACTSTREAM_LM_MAX_CONCURRENCY`` (2) LM calls in flight and decides up to
``FACTSTREAM_EDITOR_WINDOW`` (4) documents of a partition at once, so a worker has more
documents ready than LM slots: its LM share is its bottleneck, which adding workers
multiplies.

``--placement``: ``hashed`` (namespaces go where their key hashes, as with no placement
map), or ``planned``: the product's namespace placement map, as ``factstream placement
plan`` proposes it for the stream's volume, written to a file that the publisher and the
workers read (``FACTSTREAM_KAFKA_PLACEMENT_FILE``): what an operator of a multi-worker
deployment runs with.

Per N, on a fresh deployment: the N workers start, each with /metrics on a port of its
own. Warm-up, excluded alike from every run: rounds of one document per namespace (the
first of each, under another id) until every worker has handled one (models loaded,
tenants made, partitions assigned), then until every worker's log shows it joined the
group's latest generation (the rebalances are over). Then the timed documents are
published at once; the time runs from their publish until the workers'
factstream_documents_total add up to all of them (polled every 0.2 s). A rebalance inside
the timed stretch is counted (generations in the workers' logs), not hidden.

Reported per N: docs/s; per worker its documents, partitions, docs/s over its own span
(publish to its last document), LM calls, their mean number in flight and the mean wait
for a free LM slot (bench/scale_probe.py); the LM bound (the busiest worker's LM calls at
its concurrency and the stub's latency: what the partition spread allows); the CPU seconds
of each process and of the whole machine (2 cores shared with other sessions). Scaling
efficiency of N workers: docs/s(N) / (N x docs/s(1)); per added worker: (docs/s(N) -
docs/s(N-1)) / docs/s(1). Goal (issue 25): at least 0.8 per added worker.

    python -m bench.scale --docs 240 --lm-latency 500 --placement planned   # make bench-scale
    python -m bench.scale --docs 240 --lm-latency 500 --placement hashed
"""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from bench.corpus import DEFAULT_DATA, load, stream_documents, stub_rules
from bench.harness import Deployment
from bench.measure import CpuMeter, child_pids
from bench.report import RESULTS, new_report, write
from bench.scale_probe import (
    WorkerSnap,
    bound,
    generations,
    planned,
    rebalances,
    snap,
    spread,
    worker_figures,
)
from bench.throughput import service_pids
from factstream.config import Settings, load_settings
from factstream.streams.placement import Placement
from factstream.topics.records import Document
from factstream_lab.stack import manager
from factstream_lab.stack.process import free_ports

__all__ = ["GOAL_PER_WORKER", "Shape", "efficiency", "run"]

GOAL_PER_WORKER = 0.8
_WARM_ROUNDS = 5
# Every run sends at least this many warm-up rounds, whatever its worker count: each round
# edits a copy of every namespace's first document, so runs that warmed up with different
# numbers of rounds time the same documents on different knowledge bases (a first run:
# 2 workers needed 2 rounds, 1 and 3 workers 1, and the 2-worker run made 650 LM calls
# against 598 and 596).
_WARM_ROUNDS_MIN = 2
_SETTLE_S = 120.0


class Shape:
    """The workload: partitions, namespaces, window, LM concurrency and latency."""

    def __init__(
        self,
        *,
        partitions: int = 12,
        namespaces: int = 96,
        window: int = 4,
        lm_concurrency: int = 2,
        latency_ms: float = 500.0,
        placement: str = "hashed",
    ) -> None:
        self.partitions, self.namespaces, self.window = partitions, namespaces, window
        self.lm_concurrency, self.latency_ms = lm_concurrency, latency_ms
        self.placement = placement

    def env(self, placement_file: Path | None = None) -> dict[str, str]:
        placed = {"FACTSTREAM_KAFKA_PLACEMENT_FILE": str(placement_file)} if placement_file else {}
        return {
            **placed,
            "FACTSTREAM_WORKER_PARTITIONS": str(self.partitions),
            "FACTSTREAM_LM_MAX_CONCURRENCY": str(self.lm_concurrency),
            "FACTSTREAM_EDITOR_WINDOW": str(self.window),
            "FACTSTREAM_WORKER_METRICS_HOST": "127.0.0.1",
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "partitions": self.partitions,
            "namespaces": self.namespaces,
            "editor_window": self.window,
            "lm_latency_ms": self.latency_ms,
            "lm_max_concurrency_per_worker": self.lm_concurrency,
            "placement": self.placement,
        }


def efficiency(rates: dict[int, float]) -> dict[str, dict[str, float]]:
    """Scaling efficiency by worker count: overall and of the last added worker."""
    one = rates[1]
    return {
        "overall": {str(n): round(r / (n * one), 3) for n, r in sorted(rates.items())},
        "per_added_worker": {
            str(n): round((r - rates[n - 1]) / one, 3)
            for n, r in sorted(rates.items())
            if n - 1 in rates
        },
    }


async def _snaps(ports: list[int]) -> list[WorkerSnap]:
    return [await snap(port) for port in ports]


async def _wait_handled(
    dep: Deployment, ports: list[int], count: float, timeout_s: float
) -> tuple[float, list[float]]:
    """Poll until the workers handled ``count`` documents in all; the moment, and each
    worker's last moment its count grew."""
    deadline, last, seen = time.monotonic() + timeout_s, [0.0] * len(ports), [0.0] * len(ports)
    while True:
        counts = [s.docs for s in await _snaps(ports)]
        now = time.monotonic()
        last = [now if c > s else t for c, s, t in zip(counts, seen, last, strict=True)]
        seen = counts
        if sum(counts) >= count:
            return now, last
        if now > deadline:
            raise TimeoutError(f"{sum(counts):.0f} of {count:.0f} documents handled")
        dep.check_alive()
        await asyncio.sleep(0.2)


async def _warm_up(dep: Deployment, ports: list[int], firsts: list[Document]) -> int:
    """Rounds of one document per namespace (at least ``_WARM_ROUNDS_MIN``) until every
    worker has handled one, then until every worker joined the group's latest generation;
    the documents sent."""
    sent = 0
    for round_ in range(_WARM_ROUNDS):
        warm = [d.model_copy(update={"id": f"warm{round_}-{d.namespace}"}) for d in firsts]
        await dep.publish(warm)
        sent += len(warm)
        await _wait_handled(dep, ports, sent, timeout_s=900)
        if round_ + 1 >= _WARM_ROUNDS_MIN and all(s.docs > 0 for s in await _snaps(ports)):
            await _settled(dep)
            return sent
    raise RuntimeError(f"a worker handled no document in {_WARM_ROUNDS} warm-up rounds")


async def _settled(dep: Deployment) -> None:
    """Wait until every worker's last joined generation is the latest any joined."""
    deadline = time.monotonic() + _SETTLE_S
    while True:
        joined = generations(dep.workdir)
        latest = max((g for gs in joined for g in gs), default=None)
        if latest is not None and all(gs and gs[-1] == latest for gs in joined):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"the group did not settle: generations {joined}")
        await asyncio.sleep(0.5)


def _one_each(docs: list[Document]) -> list[Document]:
    """The first document of each namespace."""
    first: dict[str, Document] = {}
    for doc in docs:
        first.setdefault(doc.namespace, doc)
    return list(first.values())


def _pids(dep: Deployment) -> dict[str, int]:
    """Workers (and their embedding processes, where spawned), the stub, Kafka, Weaviate."""
    pids = service_pids(dep)
    for name, pid in dep.pids().items():
        if name.startswith("worker"):
            pids[name] = pid
            for i, child in enumerate(child_pids(pid, "spawn_main")):
                pids[f"{name} child {i}"] = child
    return pids


async def _one(
    base: Settings,
    workdir: Path,
    workers: int,
    docs: list[Document],
    rules: Any,
    shape: Shape,
    placement_file: Path | None,
) -> dict[str, Any]:
    dep = Deployment(base, workdir / f"scale-{workers}", stub=True, **shape.env(placement_file))
    ports = free_ports(workers)
    try:
        dep.start_stub(rules, shape.latency_ms)
        await dep.create_topics()
        for port in ports:
            dep.env["FACTSTREAM_WORKER_METRICS_PORT"] = str(port)
            dep.start_worker()
        warm = await _warm_up(dep, ports, _one_each(docs))
        joined = rebalances(generations(dep.workdir))
        load_avg = [round(x, 2) for x in os.getloadavg()]
        before, stub_before = await _snaps(ports), await dep.stub_stats()
        meter, started = CpuMeter(_pids(dep)), time.monotonic()
        await dep.publish(docs)
        per_doc_s = 20 * shape.latency_ms / 1000 + 5
        done, last = await _wait_handled(
            dep, ports, sum(b.docs for b in before) + len(docs), 300 + per_doc_s * len(docs)
        )
        cpu = meter.stop()
        after, stats = await _snaps(ports), await dep.stub_stats()
        rebalanced = rebalances(generations(dep.workdir)) - joined
    finally:
        await dep.close()
    seconds = done - started
    per_worker = [
        worker_figures(b, a, t - started, shape.latency_ms)
        for b, a, t in zip(before, after, last, strict=True)
    ]
    lm_s = bound(per_worker, shape.latency_ms, shape.lm_concurrency)
    return {
        "workers": workers,
        "documents": len(docs),
        "seconds": round(seconds, 2),
        "docs_per_s": round(len(docs) / seconds, 3),
        "lm_calls": stats["requests"] - stub_before["requests"],
        "lm_calls_by_task": {
            task: n - stub_before["by_task"].get(task, 0) for task, n in stats["by_task"].items()
        },
        "max_lm_in_flight": stats["max_in_flight"],
        "warm_up_documents": warm,
        "documents_per_worker": [w["documents"] for w in per_worker],
        "per_worker": per_worker,
        "lm_bound_s": round(lm_s, 2),
        "lm_bound_docs_per_s": round(len(docs) / lm_s, 3),
        "share_of_lm_bound": round(lm_s / seconds, 3),
        "rebalances_in_timed_stretch": rebalanced,
        "rebalances_before": joined,
        "cpu_s": cpu,
        "load_avg_at_start": load_avg,
    }


async def run(
    base: Settings,
    workdir: Path,
    data: Path,
    *,
    docs: int,
    shape: Shape,
    workers: tuple[int, ...] = (1, 2, 3),
) -> dict[str, Any]:
    """Each worker count on a fresh deployment; the rates and the scaling efficiency."""
    clark = load(data)
    names = [f"scale-{i}" for i in range(shape.namespaces)]
    rules, stream = stub_rules(clark), stream_documents(clark, docs, names)
    placement, placement_file = Placement(), None
    if shape.placement == "planned":
        placement, placement_file = planned(stream, shape.partitions), workdir / "placement.json"
        placement.save(placement_file)
    runs = {n: await _one(base, workdir, n, stream, rules, shape, placement_file) for n in workers}
    rates = {n: r["docs_per_s"] for n, r in runs.items()}
    scaling = efficiency(rates) if 1 in rates else {}
    if 1 in rates:
        bounds = {n: r["lm_bound_docs_per_s"] for n, r in runs.items()}
        scaling["lm_bound_per_added_worker"] = efficiency(bounds)["per_added_worker"]
    added = list(scaling.get("per_added_worker", {}).values())
    return {
        "documents": docs,
        **shape.as_dict(),
        "documents_per_partition": spread(stream, shape.partitions, placement),
        "documents_per_partition_hashed": spread(stream, shape.partitions),
        "runs": {str(n): r for n, r in runs.items()},
        "efficiency": scaling,
        "goal_per_added_worker": GOAL_PER_WORKER,
        "met": all(a >= GOAL_PER_WORKER for a in added) if added else None,
    }


def cli(
    docs: Annotated[int, typer.Option(help="Timed documents per worker count.")] = 240,
    lm_latency: Annotated[float, typer.Option(help="The stub LM's milliseconds per call.")] = 500,
    lm_concurrency: Annotated[
        int, typer.Option(help="FACTSTREAM_LM_MAX_CONCURRENCY of each worker.")
    ] = 2,
    partitions: Annotated[int, typer.Option(help="Documents partitions.")] = 12,
    namespaces: Annotated[int, typer.Option(help="Namespaces the documents spread over.")] = 96,
    window: Annotated[int, typer.Option(help="FACTSTREAM_EDITOR_WINDOW of each worker.")] = 4,
    placement: Annotated[
        str,
        typer.Option(
            help="hashed: namespaces by their key's hash; planned: the placement map "
            "`factstream placement plan` proposes for the stream's volume "
            "(FACTSTREAM_KAFKA_PLACEMENT_FILE of the publisher and the workers)."
        ),
    ] = "hashed",
    workers: Annotated[list[int] | None, typer.Option(help="Worker counts (1 2 3).")] = None,
    out: Annotated[Path, typer.Option(help="Folder of the results file.")] = RESULTS,
    data: Annotated[Path, typer.Option(help="CLARK-News folder.")] = DEFAULT_DATA,
) -> None:
    """Documents/s with 1, 2 and 3 workers; writes results/bench/<timestamp>.json."""
    if placement not in ("hashed", "planned"):
        raise typer.BadParameter(f"placement {placement!r}: hashed or planned")
    logging.basicConfig(level=logging.WARNING)
    settings = load_settings()
    manager.up(settings, ["kafka", "weaviate"])
    report = new_report("scale")
    workdir = Path(tempfile.mkdtemp(prefix="factstream-scale-"))
    shape = Shape(
        partitions=partitions,
        namespaces=namespaces,
        window=window,
        lm_concurrency=lm_concurrency,
        latency_ms=lm_latency,
        placement=placement,
    )
    counts = tuple(workers or (1, 2, 3))
    result = asyncio.run(run(settings, workdir, data, docs=docs, shape=shape, workers=counts))
    report["benchmarks"]["scale"] = result
    path = write(report, out)
    print(f"documents per partition: {result['documents_per_partition']}")
    for n, r in result["runs"].items():
        print(
            f"{n} worker(s): {r['docs_per_s']} docs/s ({r['documents']} in {r['seconds']}s), "
            f"LM bound {r['lm_bound_docs_per_s']}; per worker "
            + ", ".join(
                f"{w['documents']} docs {w['partitions']} LM in flight {w['lm_mean_in_flight']}"
                for w in r["per_worker"]
            )
        )
    print(f"efficiency: {result['efficiency']}; goal met: {result['met']}")
    print(f"results: {path}; logs: {workdir}")


if __name__ == "__main__":
    typer.run(cli)
