"""Benchmark 8 (issue 25): documents/s with 1, 2 and 3 workers in one consumer group.

CLARK-News documents (stated, bench.corpus) spread over 32 namespaces go through N real
`factstream worker` processes of one group (real Kafka, Weaviate) over 8 documents
partitions; the LM is the deterministic stub with a fixed latency per call and no limit of
its own. Each worker may have ``FACTSTREAM_LM_MAX_CONCURRENCY`` (default here 2) LM calls
in flight: with the LM's latency the bottleneck, that is each worker's share of LM
capacity, which adding workers multiplies (8 partitions keep up to 8 documents in flight).

Per N, on a fresh deployment: the N workers start, each with /metrics on a port of its
own; rounds of one warm-up document per namespace are edited until every worker has
handled one (models loaded, partitions assigned, the group's rebalances over); then the
timed documents are published at once, and the time runs until the workers'
factstream_documents_total add up to all of them (polled every 0.2 s); each worker's share
of them is recorded (partitions are not split evenly: 8 over 3 workers). Scaling efficiency
of N workers: docs/s(N) / (N x docs/s(1)); per added worker: (docs/s(N) - docs/s(N-1)) /
docs/s(1). Goal (issue 25): at least 0.8 per added worker.

    python -m bench.scale --docs 120 --lm-latency 500       # make bench-scale
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

import httpx
import typer

from bench.corpus import DEFAULT_DATA, load, stream_documents, stub_rules
from bench.harness import Deployment
from bench.report import RESULTS, new_report, write
from bench.scrape import scrape
from factstream.config import Settings, load_settings
from factstream.services import manager
from factstream.services.process import free_ports
from factstream.topics.records import Document

__all__ = ["GOAL_PER_WORKER", "efficiency", "run"]

GOAL_PER_WORKER = 0.8
NAMESPACES = [f"scale-{i}" for i in range(32)]
_DOCS = "factstream_documents_total"
_WARM_ROUNDS = 5


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


async def _per_worker(ports: list[int]) -> list[float]:
    """Documents each worker handled so far (0 while its /metrics is not up)."""
    counts = []
    for port in ports:
        try:
            counts.append((await scrape(port)).total(_DOCS))
        except httpx.HTTPError:  # its /metrics is not up yet: it handled none
            counts.append(0.0)
    return counts


async def _handled(ports: list[int]) -> float:
    return sum(await _per_worker(ports))


async def _wait_handled(dep: Deployment, ports: list[int], count: float, timeout_s: float) -> float:
    deadline = time.monotonic() + timeout_s
    while (handled := await _handled(ports)) < count:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{handled:.0f} of {count:.0f} documents handled")
        dep.check_alive()
        await asyncio.sleep(0.2)
    return time.monotonic()


async def _one(
    base: Settings,
    workdir: Path,
    workers: int,
    docs: list[Document],
    rules: dict[str, Any],
    latency_ms: float,
    lm_concurrency: int,
) -> dict[str, Any]:
    env = {
        "FACTSTREAM_WORKER_PARTITIONS": "8",
        "FACTSTREAM_LM_MAX_CONCURRENCY": str(lm_concurrency),
        # A partition's documents one at a time, as measured (docs/benchmarks.md): workers
        # are what this benchmark scales; bench/busy.py measures the editor window.
        "FACTSTREAM_EDITOR_WINDOW": "1",
        "FACTSTREAM_WORKER_METRICS_HOST": "127.0.0.1",
    }
    dep = Deployment(base, workdir / f"scale-{workers}", stub=True, **env)
    ports = free_ports(workers)
    try:
        dep.start_stub(rules, latency_ms)
        await dep.create_topics()
        for port in ports:
            dep.env["FACTSTREAM_WORKER_METRICS_PORT"] = str(port)
            dep.start_worker()
        warm = await _warm_up(dep, ports, _one_each(docs))
        before, handled = await dep.stub_stats(), await _per_worker(ports)
        started = time.monotonic()
        await dep.publish(docs)
        per_doc_s = 20 * latency_ms / 1000 + 5
        done = await _wait_handled(
            dep, ports, warm + len(docs), timeout_s=300 + per_doc_s * len(docs)
        )
        stats, after = await dep.stub_stats(), await _per_worker(ports)
    finally:
        await dep.close()
    seconds = done - started
    return {
        "workers": workers,
        "documents": len(docs),
        "seconds": round(seconds, 2),
        "docs_per_s": round(len(docs) / seconds, 3),
        "lm_calls": stats["requests"] - before["requests"],
        "max_lm_in_flight": stats["max_in_flight"],
        "warm_up_documents": warm,
        "documents_per_worker": [round(a - b) for a, b in zip(after, handled, strict=True)],
    }


async def _warm_up(dep: Deployment, ports: list[int], firsts: list[Document]) -> int:
    """Rounds of one document per namespace until every worker has handled one (its models
    loaded, its partitions assigned: the group's rebalances are over); the documents sent."""
    sent = 0
    for round_ in range(_WARM_ROUNDS):
        warm = [d.model_copy(update={"id": f"warm{round_}-{d.namespace}"}) for d in firsts]
        await dep.publish(warm)
        sent += len(warm)
        await _wait_handled(dep, ports, sent, timeout_s=900)
        if all(n > 0 for n in await _per_worker(ports)):
            return sent
    raise RuntimeError(f"a worker handled no document in {_WARM_ROUNDS} warm-up rounds")


def _one_each(docs: list[Document]) -> list[Document]:
    """The first document of each namespace."""
    first: dict[str, Document] = {}
    for doc in docs:
        first.setdefault(doc.namespace, doc)
    return list(first.values())


async def run(
    base: Settings,
    workdir: Path,
    data: Path,
    *,
    docs: int,
    latency_ms: float,
    workers: tuple[int, ...] = (1, 2, 3),
    lm_concurrency: int = 2,
) -> dict[str, Any]:
    """Each worker count on a fresh deployment; the rates and the scaling efficiency."""
    clark = load(data)
    rules, stream = stub_rules(clark), stream_documents(clark, docs, NAMESPACES)
    runs = {
        n: await _one(base, workdir, n, stream, rules, latency_ms, lm_concurrency) for n in workers
    }
    rates = {n: r["docs_per_s"] for n, r in runs.items()}
    scaling = efficiency(rates) if 1 in rates else {}
    added = list(scaling.get("per_added_worker", {}).values())
    return {
        "documents": docs,
        "namespaces": len(NAMESPACES),
        "partitions": 8,
        "lm_latency_ms": latency_ms,
        "lm_max_concurrency_per_worker": lm_concurrency,
        "runs": {str(n): r for n, r in runs.items()},
        "efficiency": scaling,
        "goal_per_added_worker": GOAL_PER_WORKER,
        "met": all(a >= GOAL_PER_WORKER for a in added) if added else None,
    }


def cli(
    docs: Annotated[int, typer.Option(help="Timed documents per worker count.")] = 120,
    lm_latency: Annotated[float, typer.Option(help="The stub LM's milliseconds per call.")] = 500,
    lm_concurrency: Annotated[
        int, typer.Option(help="FACTSTREAM_LM_MAX_CONCURRENCY of each worker.")
    ] = 2,
    out: Annotated[Path, typer.Option(help="Folder of the results file.")] = RESULTS,
    data: Annotated[Path, typer.Option(help="CLARK-News folder.")] = DEFAULT_DATA,
) -> None:
    """Documents/s with 1, 2 and 3 workers; writes bench/results/<timestamp>.json."""
    logging.basicConfig(level=logging.WARNING)
    settings = load_settings()
    manager.up(settings, ["kafka", "weaviate"])
    report = new_report("scale")
    workdir = Path(tempfile.mkdtemp(prefix="factstream-scale-"))
    result = asyncio.run(
        run(
            settings,
            workdir,
            data,
            docs=docs,
            latency_ms=lm_latency,
            lm_concurrency=lm_concurrency,
        )
    )
    report["benchmarks"]["scale"] = result
    path = write(report, out)
    for n, r in result["runs"].items():
        print(f"{n} worker(s): {r['docs_per_s']} docs/s ({r['documents']} in {r['seconds']}s)")
    print(f"efficiency: {result['efficiency']}; goal met: {result['met']}")
    print(f"results: {path}")


if __name__ == "__main__":
    typer.run(cli)
