"""What the worker's process keeps per namespace (issue 40): traced Python memory, by line.

In one process, on a private Weaviate (bench.own_weaviate; idle tenants swept as the worker
does, every 256 namespaces), each of ``--n`` new namespaces gets what the editor does to a
short conversation's namespace: its tenant expected as its document is read ahead, the
applied-batch check, a search, two facts written, the batch recorded, its facts counted;
plus the worker's own per-namespace books (the commit ledger, the busiest-namespaces
counters). tracemalloc snapshots after a warm-up of ``--warm`` namespaces, after the N, and
after the N tenants are made inactive give the bytes kept per namespace and the lines that
keep them; Weaviate's RSS and open files are sampled for ``--settle-s`` after.

``--no-trace``: no tracemalloc (its own books would be in the RSS); instead this process's
resident memory after a settle (gc, glibc's malloc_trim: measurement only) after the warm-up,
at each fifth of the N and after the deactivation: the RSS slope per idle namespace between
larger N. Weaviate's RSS is given over its empty start, over the store with its collections,
and over the store after the warm-up (collections and ``--warm`` inactive tenants).

    python -m bench.namespace_memory --n 3000
"""

from __future__ import annotations

import asyncio
import ctypes
import gc
import os
import tempfile
import time
import tracemalloc
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer

from bench.measure import rss_mib
from bench.own_weaviate import OwnWeaviate
from bench.report import RESULTS, new_report
from factstream.agents.ledger import Ledger
from factstream.agents.series import NamespaceSeries
from factstream.config import Settings
from factstream.metrics import Metrics
from factstream.store.base import AppliedBatch, StoredFact
from factstream.store.weaviate_store import WeaviateFactStore
from factstream.topics.records import Fact, HistoryEntry

__all__ = ["run"]

_DIM = 16
_T0 = datetime(2024, 3, 1, tzinfo=UTC)


def _fact(namespace: str, i: int) -> StoredFact:
    entry = HistoryEntry(ts=_T0, truth=True, document_id="d0", edit_id=f"{namespace}-e{i}")
    fact = Fact(
        fact_id=f"f{i}",
        namespace=namespace,
        text=f"{namespace} fact {i} is true",
        truth=True,
        history=[entry],
        first_seen=_T0,
        last_changed=_T0,
    )
    vector = [float((i + k) % 7) + 1.0 for k in range(_DIM)]
    return StoredFact(fact, vector)


class _Worker:
    """The store and the worker's per-namespace books, driven as a document would."""

    def __init__(self, store: WeaviateFactStore) -> None:
        self.store, self.ledger = store, Ledger()
        self.series = NamespaceSeries(Metrics.create().worker, [], 10)

    async def conversation(self, namespace: str) -> None:
        store = self.store
        await store.applied_batch(namespace, "d0")
        await store.search(
            namespace,
            "who is the mayor",
            [1.0] * _DIM,
            as_of=None,
            top_k=5,
            min_similarity=-1.0,
            alpha=0.75,
        )
        await store.upsert(namespace, [_fact(namespace, 0), _fact(namespace, 1)])
        await store.record_batch(namespace, AppliedBatch("d0", f"b-{namespace}", 2))
        await store.count_facts(namespace)
        self.ledger.record(namespace, "d0")


def _settled_rss_mib() -> float:
    """This process's RSS after a full collection and glibc returning free heap to the OS."""
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    return rss_mib(os.getpid())


def _slope_bytes(points: list[dict[str, float]]) -> float:
    """Least-squares bytes per namespace through (namespaces, rss_mib) points."""
    xs, ys = [p["namespaces"] for p in points], [p["rss_mib"] * 2**20 for p in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mx) ** 2 for x in xs)
    return round(sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var, 1)


def _traced() -> tracemalloc.Snapshot:
    gc.collect()
    return tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.Filter(False, tracemalloc.__file__)]
    )


def _short(filename: str) -> str:
    return filename.split("site-packages/")[-1].split("/work/")[-1]


def _grown(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot, n: int) -> dict[str, Any]:
    stats = after.compare_to(before, "lineno")
    total = sum(s.size_diff for s in stats)
    top = [
        {
            "where": f"{_short(s.traceback[0].filename)}:{s.traceback[0].lineno}",
            "bytes": s.size_diff,
            "blocks": s.count_diff,
        }
        for s in sorted(stats, key=lambda s: -s.size_diff)[:15]
    ]
    return {"bytes": total, "bytes_per_namespace": round(total / n, 1), "top": top}


async def run(
    base: Settings,
    n: int,
    warm: int,
    concurrency: int,
    *,
    expect: bool = True,
    settle_s: float = 0.0,
    go_env: dict[str, str] | None = None,
    trace: bool = True,
) -> dict[str, Any]:
    """On a private Weaviate (``go_env``: GOGC, GOMEMLIMIT for it)."""
    with tempfile.TemporaryDirectory(prefix="bench-nsmem-") as tmp:
        private = OwnWeaviate(base, Path(tmp), **(go_env or {}))
        private.start()
        try:
            out = await _run(
                private.settings, private.pid, n, warm, concurrency, (expect, trace), settle_s
            )
        finally:
            private.stop()
    out["weaviate_env"] = go_env or {}
    return out


async def _run(
    settings: Settings,
    pid: int | None,
    n: int,
    warm: int,
    concurrency: int,
    modes: tuple[bool, bool],
    settle_s: float,
) -> dict[str, Any]:
    """``modes``: (expect the tenants ahead, trace Python allocations)."""
    expect, trace = modes
    prefix = f"Mem{uuid.uuid4().hex[:8]}"
    idle_s = 2.0  # the worker's sweep, short: a node holds ~700 active tenants (open files)
    store_settings = settings.store.model_copy(
        update={"collection_prefix": prefix, "tenant_idle_s": idle_s}
    )
    assert pid is not None  # noqa: S101 - started
    weaviate_mib = {"start": rss_mib(pid)}
    store = await WeaviateFactStore.open(settings.weaviate, store_settings)
    weaviate_mib["with_collections"] = rss_mib(pid)
    worker = _Worker(store)
    out: dict[str, Any] = {
        "n": n,
        "warm": warm,
        "concurrency": concurrency,
        "expect": expect,
        "trace": trace,
    }

    async def drive(names: list[str]) -> None:
        for start in range(0, len(names), concurrency):
            group = names[start : start + concurrency]
            for name in group:
                if expect:
                    store.expect(name)  # as the window reads their documents ahead
            await asyncio.gather(*(worker.conversation(name) for name in group))
            if start % 256 == 0:
                await store.deactivate_idle(lambda ns: True)

    try:
        await drive([f"warm-{i}" for i in range(warm)])
        await asyncio.sleep(idle_s + 0.5)
        await store.deactivate_idle(lambda ns: True)
        weaviate_mib["after_warm"] = rss_mib(pid)
        rss = [{"namespaces": 0, "rss_mib": _settled_rss_mib()}]
        if trace:
            tracemalloc.start(1)
            before = _traced()
        started = time.monotonic()
        fresh = [f"conv-{i:07d}" for i in range(n)]
        for k in range(5):
            await drive(fresh[n * k // 5 : n * (k + 1) // 5])
            if not trace:
                rss.append({"namespaces": n * (k + 1) // 5, "rss_mib": _settled_rss_mib()})
        out["s_per_namespace"] = round((time.monotonic() - started) / n, 4)
        if trace:
            out["after_fresh"] = _grown(before, _traced(), n)
        weaviate_mib["after_fresh"] = rss_mib(pid)
        await asyncio.sleep(idle_s + 0.5)
        swept = await store.deactivate_idle(lambda ns: True)
        out["deactivated_at_end"] = len(swept.deactivated)
        del swept
        if trace:
            out["after_deactivation"] = _grown(before, _traced(), n)
            tracemalloc.stop()
        else:
            rss.append({"namespaces": n, "rss_mib": _settled_rss_mib(), "deactivated": True})
            out["process_rss_settled"] = rss
            # from the first fifth on: the one-off growth of a process's first namespaces
            # (connections, caches, the allocator's arenas) is before it
            out["process_rss_bytes_per_namespace"] = _slope_bytes(rss[1:-1])
            out["process_rss_bytes_per_idle_namespace"] = round(
                (rss[-1]["rss_mib"] - rss[1]["rss_mib"]) * 2**20 / (n - n // 5), 1
            )
        out["weaviate_settling"] = await _settle(pid, settle_s)
        weaviate_mib["after_deactivation"] = out["weaviate_settling"][-1]["rss_mib"]
        out["weaviate_rss_mib"] = weaviate_mib
        for since in ("start", "with_collections", "after_warm"):
            out[f"weaviate_after_deactivation_over_{since}"] = round(
                weaviate_mib["after_deactivation"] / weaviate_mib[since], 3
            )
    finally:
        await store.close()
    return out


async def _settle(pid: int, most_s: float) -> list[dict[str, float]]:
    """Weaviate's memory and open files every 10 s for ``most_s`` after the deactivation."""
    started, samples = time.monotonic(), []
    while True:
        at = time.monotonic() - started
        files = len(list(Path(f"/proc/{pid}/fd").iterdir()))
        samples.append({"s": round(at, 1), "rss_mib": rss_mib(pid), "open_files": files})
        if at >= most_s:
            return samples
        await asyncio.sleep(10.0)


def main(
    n: Annotated[int, typer.Option(help="New namespaces traced.")] = 3000,
    warm: Annotated[int, typer.Option(help="Namespaces before the first snapshot.")] = 200,
    concurrency: Annotated[int, typer.Option(help="Conversations at once.")] = 32,
    expect: Annotated[
        bool, typer.Option(help="Tell the store of the namespaces ahead (as the editor does).")
    ] = True,
    settle_s: Annotated[float, typer.Option(help="Seconds Weaviate is watched after.")] = 0,
    weaviate_env: Annotated[
        list[str],
        typer.Option(help="KEY=VALUE for the private Weaviate (GOGC, GOMEMLIMIT, ...); repeat."),
    ] = [],  # noqa: B006
    trace: Annotated[
        bool, typer.Option(help="tracemalloc; --no-trace: settled RSS at each fifth instead.")
    ] = True,
) -> None:
    """Python memory the worker's store and books keep per namespace (issue 40)."""
    report = new_report("namespace-memory")
    report["namespace_memory"] = asyncio.run(
        run(
            Settings(),
            n,
            warm,
            concurrency,
            expect=expect,
            settle_s=settle_s,
            go_env=dict(item.split("=", 1) for item in weaviate_env),
            trace=trace,
        )
    )
    report["namespace_memory"]["caveat"] = (
        "tracemalloc (Python allocations only, not RSS)"
        if trace
        else "RSS after gc and malloc_trim (measurement only)"
    ) + f"; private Weaviate; shared 2-core machine, load average {os.getloadavg()[0]:.1f}"
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{report['timestamp']}-namespace-memory.json"
    path.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    typer.echo(orjson.dumps(report["namespace_memory"], option=orjson.OPT_INDENT_2).decode())
    typer.echo(f"wrote {path}")


if __name__ == "__main__":
    typer.run(main)
