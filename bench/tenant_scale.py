"""What an inactive tenant costs Weaviate, against N (issue 40): the store side only.

Not through Kafka and the worker (``make bench-namespaces`` is that, and takes hours at
N = 10,000 here): this drives the product's store directly, with the calls the worker makes
for a new namespace, on a private Weaviate (bench/own_weaviate.py, never the shared one).
Namespaces come in groups of ``--group``: each group's tenants are expected and created
together (``WeaviateFactStore.expect``, one request per collection per 100), each namespace
gets two facts (precomputed 384-dimension vectors, no embedding) and its applied batch, and
after the store's idle time the product's sweep (``deactivate_idle``) makes them inactive,
so that at most one group is active at a time (Weaviate holds ~28 open files per active
namespace). At each checkpoint of ``--at`` (N = 1,000, 10,000, ...): every tenant swept
inactive, then Weaviate's RSS and Go heap (its pprof port: ``/debug/pprof/heap?gc=1``, a
garbage collection first) sampled for ``--settle-s``, its data folder's size, the sweep's
own time (it lists every tenant), and the first retrieval on ``--asks`` inactive namespaces
(``prepare_read`` and ``search`` with a precomputed vector: the store's part of an ask,
without the question's embedding), p50/p95, beside a second one.

    python -m bench.tenant_scale --at 1000 --at 10000 --at 30000
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer

from bench.measure import rss_mib, summary_ms
from bench.own_weaviate import OwnWeaviate
from bench.report import RESULTS, new_report
from factstream.config import Settings
from factstream.store.base import AppliedBatch, StoredFact
from factstream.store.pools import pool_of
from factstream.store.weaviate_store import WeaviateFactStore
from factstream.topics.records import Fact, HistoryEntry
from factstream_lab.stack.process import free_ports

__all__ = ["run"]

_DIM = 384
_IDLE_S = 1.0  # the store's tenant idle time here: a group is swept a second after its writes
_GO_FIELDS = ("HeapAlloc", "HeapInuse", "HeapIdle", "HeapReleased", "HeapSys", "Sys")
CAVEAT = (
    "store side only (the product's WeaviateFactStore on a private Weaviate; not through "
    "Kafka and the worker); two facts and one applied batch per namespace; shared 2-core "
    "machine"
)


def _vector(seed: int) -> list[float]:
    rnd = random.Random(seed)  # noqa: S311 - a test vector, not a secret
    return [rnd.uniform(-1.0, 1.0) for _ in range(_DIM)]


def _facts(namespace: str, seed: int) -> list[StoredFact]:
    from datetime import UTC, datetime  # noqa: PLC0415

    t0 = datetime(2024, 3, 1, tzinfo=UTC)
    out = []
    for i in range(2):
        entry = HistoryEntry(ts=t0, truth=True, document_id="d0", edit_id=f"{namespace}-e{i}")
        fact = Fact(
            fact_id=f"f{i}",
            namespace=namespace,
            text=f"{namespace} said fact {i}: the meeting moved to room {seed % 97}",
            truth=True,
            history=[entry],
            first_seen=t0,
            last_changed=t0,
        )
        out.append(StoredFact(fact, _vector(seed * 2 + i)))
    return out


def go_heap_mib(port: int) -> dict[str, float]:
    """Weaviate's Go memstats (MiB) after a garbage collection (pprof's ``gc=1``)."""
    url = f"http://127.0.0.1:{port}/debug/pprof/heap?gc=1&debug=1"
    with urllib.request.urlopen(url, timeout=60) as reply:  # noqa: S310 - our own local port
        return memstats_mib(reply.read().decode(errors="replace"))


def memstats_mib(text: str) -> dict[str, float]:
    """The ``# Field = bytes`` lines of a Go heap profile in text (``debug=1``), in MiB."""
    out = {}
    for field in _GO_FIELDS:
        found = re.search(rf"^# {field} = (\d+)$", text, re.MULTILINE)
        if found:
            out[field] = round(int(found.group(1)) / 2**20, 1)
    return out


def go_heap_profile(port: int) -> bytes:
    """Weaviate's heap profile (pprof's gzipped protobuf, after a GC): ``go tool pprof``."""
    url = f"http://127.0.0.1:{port}/debug/pprof/heap?gc=1"
    with urllib.request.urlopen(url, timeout=60) as reply:  # noqa: S310 - our own local port
        return bytes(reply.read())


def _open_files(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))


def _data_mib(path: Path) -> float:
    """The folder's files' sizes (``find``: pathlib's walk took minutes at 60,000 shards)."""
    found = subprocess.run(  # noqa: S603 - a fixed command on our own folder
        [shutil.which("find") or "find", str(path), "-type", "f", "-printf", "%s\\n"],
        capture_output=True,
        text=True,
        check=True,
    )
    return round(sum(int(size) for size in found.stdout.split()) / 2**20, 1)


class _Bench:
    def __init__(
        self, store: WeaviateFactStore, pid: int, pprof: int, data: Path, pools: int = 0
    ) -> None:
        self.store, self.pid, self.pprof, self.data = store, pid, pprof, data
        self.pools = pools
        self.names: list[str] = []
        self.profiles: dict[int, bytes] = {}  # N -> Weaviate's heap profile there
        self.create_ms: list[float] = []  # per group: ms per namespace (both tenants)
        self.write_ms: list[float] = []  # per group: ms per namespace (facts and batch)

    async def group(self, names: list[str], concurrency: int) -> float:
        """Create, write and (after the idle time) sweep one group; the RSS while active."""
        store = self.store
        started = time.perf_counter()
        for name in names:
            store.expect(name)  # as the worker's window reads their documents ahead
        await asyncio.gather(*(store._ensure_tenant(n) for n in names))  # noqa: SLF001
        self.create_ms.append((time.perf_counter() - started) * 1000 / len(names))
        started = time.perf_counter()
        gate = asyncio.Semaphore(concurrency)

        async def write(name: str, seed: int) -> None:
            async with gate:
                await store.upsert(name, _facts(name, seed))
                await store.record_batch(name, AppliedBatch("d0", f"b-{name}", 2))

        base = len(self.names)
        await asyncio.gather(*(write(n, base + i) for i, n in enumerate(names)))
        self.write_ms.append((time.perf_counter() - started) * 1000 / len(names))
        self.names.extend(names)
        active_mib = rss_mib(self.pid)
        await asyncio.sleep(_IDLE_S + 0.1)
        await store.deactivate_idle(lambda ns: True)
        return active_mib

    async def checkpoint(self, settle_s: float, asks: int, peak: float) -> dict[str, Any]:
        await asyncio.sleep(_IDLE_S + 0.1)
        started = time.perf_counter()
        swept = await self.store.deactivate_idle(lambda ns: True)
        sweep_s = time.perf_counter() - started
        out: dict[str, Any] = {
            "n": len(self.names),
            "load_avg": round(os.getloadavg()[0], 2),
            "active_peak_rss_mib": peak,
            "sweep": {"s": round(sweep_s, 3), "deactivated": len(swept.deactivated)},
            "create_ms_per_namespace": _spread(self.create_ms),
            "write_ms_per_namespace": _spread(self.write_ms),
        }
        self.create_ms, self.write_ms = [], []
        out["settling"] = await self._settle(settle_s)
        out["rss_mib"] = out["settling"][-1]["rss_mib"]
        out["go_heap_mib"] = await asyncio.to_thread(go_heap_mib, self.pprof)
        out["rss_after_gc_mib"] = rss_mib(self.pid)
        self.profiles[len(self.names)] = await asyncio.to_thread(go_heap_profile, self.pprof)
        out["data_mib"] = _data_mib(self.data)
        out["asks"] = await self._asks(asks)
        return out

    async def _settle(self, most_s: float) -> list[dict[str, float]]:
        """RSS and open files every 15 s for ``most_s`` (Go's forced GC is every 2 min)."""
        started, samples = time.monotonic(), []
        while True:
            at = time.monotonic() - started
            samples.append(
                {
                    "s": round(at, 1),
                    "rss_mib": rss_mib(self.pid),
                    "open_files": _open_files(self.pid),
                }
            )
            if at >= most_s:
                return samples
            await asyncio.sleep(15.0)

    async def _asks(self, count: int) -> dict[str, Any]:
        """First and second retrieval on ``count`` inactive namespaces spread over all."""
        store, step = self.store, max(1, len(self.names) // count)
        first: list[float] = []
        second: list[float] = []
        asked = self.names[::step][:count]
        if self.pools:  # one namespace a pool: each first ask finds its pool inactive
            by_pool = {pool_of(name, self.pools): name for name in reversed(asked)}
            asked = sorted(by_pool.values())
        for k, name in enumerate(asked):
            vector = _vector(10_000_000 + k)
            for into in (first, second):
                started = time.perf_counter()
                await store.prepare_read(name, valid=None)
                hits = await store.search(
                    name,
                    "where did the meeting move",
                    vector,
                    as_of=None,
                    top_k=5,
                    min_similarity=-1.0,
                    alpha=0.75,
                )
                into.append(time.perf_counter() - started)
                if not hits:
                    raise RuntimeError(f"{name}: no facts found")
        return {"first_inactive": summary_ms(first), "second_active": summary_ms(second)}


def _spread(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    return {
        "groups": len(values),
        "median": round(ordered[len(ordered) // 2], 2),
        "max": round(ordered[-1], 2),
    }


async def run(
    base: Settings,
    at: list[int],
    *,
    group: int,
    concurrency: int,
    settle_s: float,
    asks: int,
    go_env: dict[str, str] | None = None,
    pools: int = 0,
) -> dict[str, Any]:
    """Namespaces up to each N of ``at`` on a private Weaviate (``go_env``: more env for it;
    ``pools``: the store's FACTSTREAM_STORE_POOLS, 0 a tenant per namespace)."""
    (pprof,) = free_ports(1)
    env = {
        "GO_PROFILING_DISABLE": "false",
        "GO_PROFILING_PORT": str(pprof),
        "DEBUG_ENDPOINTS_ENABLED": "true",
        **(go_env or {}),
    }
    with tempfile.TemporaryDirectory(prefix="bench-tenants-") as tmp:
        private = OwnWeaviate(base, Path(tmp), **env)
        private.start()
        try:
            pid = private.pid
            assert pid is not None  # noqa: S101 - started
            out: dict[str, Any] = {
                "weaviate_env": go_env or {},
                "group": group,
                "concurrency": concurrency,
                "settle_s": settle_s,
                "pools": pools,
                "start": {"rss_mib": rss_mib(pid), "go_heap_mib": go_heap_mib(pprof)},
            }
            prefix = f"Scale{uuid.uuid4().hex[:8]}"
            store_settings = private.settings.store.model_copy(
                update={"collection_prefix": prefix, "tenant_idle_s": _IDLE_S, "pools": pools}
            )
            store = await WeaviateFactStore.open(private.settings.weaviate, store_settings)
            try:
                out["with_collections"] = {
                    "rss_mib": rss_mib(pid),
                    "go_heap_mib": go_heap_mib(pprof),
                }
                bench = _Bench(store, pid, pprof, private.data_dir, pools)
                out["checkpoints"] = await _grow(
                    bench, sorted(at), group, concurrency, (settle_s, asks)
                )
                out["profiles"] = bench.profiles
            finally:
                await store.close()
        finally:
            private.stop()
    out["per_inactive_namespace"] = _slopes(out["checkpoints"])
    return out


async def _grow(
    bench: _Bench, at: list[int], group: int, concurrency: int, check: tuple[float, int]
) -> list[dict[str, Any]]:
    settle_s, asks = check
    checkpoints: list[dict[str, Any]] = []
    started = time.monotonic()
    for target in at:
        peak = 0.0
        while len(bench.names) < target:
            size = min(group, target - len(bench.names))
            names = [f"conv-{len(bench.names) + i:07d}" for i in range(size)]
            peak = max(peak, await bench.group(names, concurrency))
        point = await bench.checkpoint(settle_s, asks, peak)
        point["elapsed_s"] = round(time.monotonic() - started, 1)
        checkpoints.append(point)
        typer.echo(orjson.dumps(point).decode())
    return checkpoints


def _slopes(points: list[dict[str, Any]]) -> dict[str, float | None]:
    """KiB per inactive namespace between the first and last checkpoint (settled RSS, and
    the Go heap in use after a GC)."""
    if len(points) < 2:
        return {"rss_kib": None, "heap_inuse_kib": None}
    a, b = points[0], points[-1]
    dn = b["n"] - a["n"]
    return {
        "rss_kib": round((b["rss_after_gc_mib"] - a["rss_after_gc_mib"]) * 1024 / dn, 2),
        "heap_inuse_kib": round(
            (b["go_heap_mib"]["HeapInuse"] - a["go_heap_mib"]["HeapInuse"]) * 1024 / dn, 2
        ),
        "heap_alloc_kib": round(
            (b["go_heap_mib"]["HeapAlloc"] - a["go_heap_mib"]["HeapAlloc"]) * 1024 / dn, 2
        ),
        "data_kib": round((b["data_mib"] - a["data_mib"]) * 1024 / dn, 2),
    }


def plot(result: dict[str, Any], path: Path) -> None:
    """Each figure against N (log scale), titled as the store side only."""
    import matplotlib  # noqa: PLC0415 - only when plotting

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    points = result["checkpoints"]
    ns = [p["n"] for p in points]
    panels: dict[str, dict[str, list[float]]] = {
        "Weaviate memory, all tenants inactive (MiB)": {
            "RSS after GC": [p["rss_after_gc_mib"] for p in points],
            "Go heap in use": [p["go_heap_mib"].get("HeapInuse", 0.0) for p in points],
            "Go heap live": [p["go_heap_mib"].get("HeapAlloc", 0.0) for p in points],
        },
        "Weaviate RSS, a group active (MiB)": {"peak": [p["active_peak_rss_mib"] for p in points]},
        "first retrieval on an inactive tenant (ms)": {
            "p50": [p["asks"]["first_inactive"]["p50_ms"] for p in points],
            "p95": [p["asks"]["first_inactive"]["p95_ms"] for p in points],
            "second p95": [p["asks"]["second_active"]["p95_ms"] for p in points],
        },
        "ms per namespace (median group)": {
            "tenant creation": [p["create_ms_per_namespace"]["median"] for p in points],
            "2 facts + batch": [p["write_ms_per_namespace"]["median"] for p in points],
            "sweep (all tenants listed)": [p["sweep"]["s"] * 1000 for p in points],
        },
    }
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4.2))
    for ax, (title, series) in zip(axes, panels.items(), strict=True):
        for label, ys in series.items():
            ax.plot(ns, ys, marker="o", label=label)
        ax.set_xscale("log")
        ax.set_xlabel("namespaces (N)")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=8)
    fig.suptitle(f"bench.tenant_scale: {CAVEAT}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(
    at: Annotated[list[int], typer.Option(help="N checkpoints; repeat.")] = [1000, 10000],  # noqa: B006
    group: Annotated[int, typer.Option(help="Namespaces active at once.")] = 300,
    concurrency: Annotated[int, typer.Option(help="Namespaces written at once.")] = 32,
    settle_s: Annotated[float, typer.Option(help="Seconds watched at each checkpoint.")] = 130,
    asks: Annotated[int, typer.Option(help="Inactive namespaces asked at each checkpoint.")] = 60,
    weaviate_env: Annotated[
        list[str], typer.Option(help="KEY=VALUE for the private Weaviate; repeat.")
    ] = [],  # noqa: B006
    pools: Annotated[
        int, typer.Option(help="FACTSTREAM_STORE_POOLS: 0 a tenant per namespace.")
    ] = 0,
) -> None:
    """Weaviate's cost per inactive tenant against N, store side only (issue 40)."""
    report = new_report("tenant-scale")
    result = asyncio.run(
        run(
            Settings(),
            at,
            group=group,
            concurrency=concurrency,
            settle_s=settle_s,
            asks=asks,
            go_env=dict(item.split("=", 1) for item in weaviate_env),
            pools=pools,
        )
    )
    result["caveat"] = f"{CAVEAT}, load average {os.getloadavg()[0]:.1f} at the end"
    report["tenant_scale"] = result
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{report['timestamp']}-tenant-scale.json"
    profiles: dict[int, bytes] = result.pop("profiles")
    for n, profile in profiles.items():  # go tool pprof -top -sample_index=inuse_space FILE
        path.with_name(f"{report['timestamp']}-tenant-scale-heap-{n}.pb.gz").write_bytes(profile)
    path.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    plot(result, path.with_suffix(".png"))
    typer.echo(orjson.dumps(result["per_inactive_namespace"]).decode())
    typer.echo(f"wrote {path}")


if __name__ == "__main__":
    typer.run(main)
