"""Benchmark 9 (issue 40): what the N-th namespace costs; namespaces as cheap as rows.

For each N, on a fresh deployment (its own topics, consumer group, collections, the
deterministic stub LM at ``--lm-latency`` ms a call, one real `factstream worker`):

1. warm: ``--warm-docs`` short conversations' chunks (CLARK-News stated documents,
   bench.corpus) into ``warm`` namespaces that already exist (a document each first), timed
   from publish until the worker's factstream_documents_total counts them: a fixed sample,
   whatever N (the rate of each half is kept to show it is stable), so the baseline neither
   takes hours at N=10,000 nor grows the warm namespaces to thousands of facts each;
2. fresh: N x ``chunks`` documents, ``chunks`` to each of N namespaces never seen
   before (each one a new tenant), timed alike: documents/s fresh over warm; the worker's
   resident memory and the rate are sampled at each tenth of the namespaces (the slope of
   its memory between larger N);
3. tenant creation: ``--tenants`` more namespaces' tenants created one at a time (both
   collections, as the store does on a namespace's first write), ms each;
4. memory: the worker's and Weaviate's resident memory before (1), after (2) and after the
   fresh namespaces' tenants are made inactive (``WeaviateFactStore.deactivate_idle``),
   per namespace. Weaviate is a private one started for each N (``bench.own_weaviate``;
   ``--shared-weaviate`` uses the shared local one, whose figures include other sessions'
   collections). Weaviate closes an inactive tenant's shard and the Go runtime returns the
   freed heap to the OS only over minutes, so its memory and open files are sampled after
   the deactivation until they are back near the start (at most ``--settle-s``). The
   worker deactivates idle tenants itself during the run (``--idle-s``): each active
   tenant holds ~24 open files in Weaviate, so a node with a 20,000 file limit holds only
   ~800 active ones;
5. the series on the worker's /metrics (sample lines), and the placement map the product's
   planner (``factstream placement plan``) proposes for these namespaces: entries and bytes;
6. the first ask (the query engine's retrieval: namespace check, question embedded, hybrid
   search; no generation) on ``--asks`` inactive namespaces, p50/p95, beside a second ask of
   the same namespaces (active by then).

Writes ``bench/results/<stamp>-namespaces.json`` and ``<stamp>-namespaces.png`` (each figure
against N).

    python -m bench.namespaces --n 10000                    # make bench-namespaces
    python -m bench.namespaces --n 100 --n 300 --n 1000     # smaller, several N
"""

from __future__ import annotations

import asyncio
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Annotated, Any

import httpx
import orjson
import typer

from bench.ask import _weaviate_pid
from bench.corpus import DEFAULT_DATA, load, questions, stream_documents, stub_rules
from bench.harness import Deployment
from bench.measure import rss_mib, summary_ms
from bench.own_weaviate import OwnWeaviate
from bench.report import RESULTS, new_report
from bench.scrape import scrape
from factstream.ask.ask_records import AskRequest
from factstream.ask.query import QueryEngine
from factstream.clients import open_clients
from factstream.config import Settings
from factstream.placement.planner import plan
from factstream.store.schema import collections_for
from factstream.store.weaviate_store import WeaviateFactStore
from factstream.topics.records import Document
from factstream_lab.stack.process import free_port

__all__ = ["run"]

log = logging.getLogger(__name__)

_DOCS = "factstream_documents_total"
_SAMPLE_S = 10.0  # between samples of Weaviate's memory while it settles


async def _handled(port: int) -> float:
    try:
        return (await scrape(port)).total(_DOCS)
    except httpx.HTTPError:  # not listening yet
        return 0.0


async def _wait(dep: Deployment, port: int, documents: int, timeout_s: float) -> float:
    """Poll the worker's /metrics until it has handled ``documents``; the moment it had."""
    deadline = time.monotonic() + timeout_s
    while (seen := await _handled(port)) < documents:
        if time.monotonic() > deadline:
            raise TimeoutError(f"{seen:.0f} of {documents} documents handled")
        dep.check_alive()
        await asyncio.sleep(0.2)
    return time.monotonic()


def _chunks(base: list[Document], prefix: str, namespaces: list[str], per: int) -> list[Document]:
    """``base``'s texts as chunks of conversations: ``per`` consecutive ones per namespace
    when there are as many namespaces as conversations, else round robin."""
    docs = []
    for i, doc in enumerate(base):
        ns = (
            namespaces[i // per]
            if len(namespaces) * per == len(base)
            else namespaces[i % len(namespaces)]
        )
        docs.append(doc.model_copy(update={"id": f"{prefix}{i:07d}", "namespace": ns}))
    return docs


async def _series(port: int) -> int:
    async with httpx.AsyncClient(timeout=30) as client:
        text = (await client.get(f"http://127.0.0.1:{port}/metrics")).text
    return sum(1 for line in text.splitlines() if line and not line.startswith("#"))


async def _tenant_creation_ms(settings: Settings, count: int) -> dict[str, Any]:
    """Create ``count`` namespaces' tenants one at a time, as a lone namespace's first write
    does, then ``count`` more expected together, as the worker's read-ahead does (ms each)."""
    store = await WeaviateFactStore.open(settings.weaviate, settings.store)
    seconds = []
    try:
        for i in range(count):
            started = time.perf_counter()
            await store._ensure_tenant(f"created-{i:05d}")  # noqa: SLF001 - what is timed
            seconds.append(time.perf_counter() - started)
        together = [f"together-{i:05d}" for i in range(count)]
        started = time.perf_counter()
        for name in together:
            store.expect(name)
        await asyncio.gather(*(store._ensure_tenant(name) for name in together))  # noqa: SLF001
        batched_ms = (time.perf_counter() - started) * 1000 / max(count, 1)
    finally:
        await store.close()
    return {**summary_ms(seconds), "together_ms_each": round(batched_ms, 2)}


async def _deactivate(settings: Settings, fresh: set[str]) -> tuple[int, float]:
    """Make the fresh namespaces' tenants inactive; (how many, seconds)."""
    store = await WeaviateFactStore.open(
        settings.weaviate, settings.store.model_copy(update={"tenant_idle_s": 0.01})
    )
    try:
        await asyncio.sleep(0.05)
        started = time.perf_counter()
        swept = await store.deactivate_idle(lambda ns: ns in fresh)
        return len(swept.deactivated), time.perf_counter() - started
    finally:
        await store.close()


def _open_files(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))


async def _settle(
    pid: int, start_mib: float, start_files: int, most_s: float
) -> list[dict[str, float]]:
    """Weaviate's memory and open files every ``_SAMPLE_S`` after a deactivation, until its
    open files are back to the start's and its memory within 10% of the start's (or
    ``most_s``): inactive shards close, and the Go runtime returns freed heap, over minutes."""
    started = time.monotonic()
    samples: list[dict[str, float]] = []
    while True:
        at = time.monotonic() - started
        files, rss = _open_files(pid), rss_mib(pid)
        samples.append({"s": round(at, 1), "rss_mib": rss, "open_files": files})
        if (files <= start_files + 10 and rss <= start_mib * 1.1) or at >= most_s:
            return samples
        await asyncio.sleep(_SAMPLE_S)


async def _asks(settings: Settings, namespaces: list[str], data: Path) -> dict[str, Any]:
    """The retrieval of a first question on each (inactive) namespace, then a second."""
    asked = questions(data)
    async with open_clients(settings) as clients:
        engine = QueryEngine.of(clients, settings)
        await engine.retrieve(AskRequest(asked[0], "warm-0"))  # the model loaded, not timed
        first: list[float] = []
        second: list[float] = []
        for i, ns in enumerate(namespaces):
            for into in (first, second):
                started = time.perf_counter()
                await engine.retrieve(AskRequest(asked[i % len(asked)], ns))
                into.append(time.perf_counter() - started)
    return {"first_inactive": summary_ms(first), "second_active": summary_ms(second)}


def _statuses(settings: Settings, names: set[str]) -> dict[str, int]:
    import weaviate  # noqa: PLC0415 - a check of the benchmark's own, outside the product

    cfg = settings.weaviate
    with weaviate.connect_to_local(host=cfg.host, port=cfg.http_port, grpc_port=cfg.grpc_port) as c:
        tenants = c.collections.use(collections_for(settings.store.collection_prefix).facts.name)
        counts: dict[str, int] = {}
        for name, tenant in tenants.tenants.get().items():
            if name in names:
                key = tenant.activity_status.value
                counts[key] = counts.get(key, 0) + 1
    return counts


async def _one(
    base: Settings,
    workdir: Path,
    n: int,
    *,
    own: bool,
    weaviate_env: dict[str, str],
    **options: Any,
) -> dict[str, Any]:
    """One N, on a private Weaviate (``own``, with ``weaviate_env`` more environment) or the
    shared one."""
    if not own:
        out = await _measure(base, workdir, n, weaviate_pid=_weaviate_pid(base), **options)
        out["weaviate"] = "shared (other sessions' collections included)"
        return out
    private = OwnWeaviate(base, workdir / f"weaviate-n{n}", **weaviate_env)
    private.start()
    try:
        out = await _measure(private.settings, workdir, n, weaviate_pid=private.pid, **options)
    finally:
        private.stop()
    out["weaviate"] = f"private (bench.own_weaviate), {private.data_mib} MiB of data at the end"
    out["weaviate_env"] = weaviate_env
    return out


async def _measure(
    base: Settings,
    workdir: Path,
    n: int,
    *,
    weaviate_pid: int | None,
    chunks: int,
    warm: int,
    warm_docs: int,
    latency_ms: float,
    tenants: int,
    asks: int,
    data: Path,
    idle_s: float,
    settle_s: float,
) -> dict[str, Any]:
    clark = load(data)
    port = free_port()
    env = {
        "FACTSTREAM_WORKER_METRICS_PORT": str(port),
        "FACTSTREAM_WORKER_METRICS_HOST": "127.0.0.1",
        # The worker's own sweep keeps Weaviate's active tenants (and open files) bounded;
        # the benchmark then deactivates the rest, once, timed.
        "FACTSTREAM_STORE_TENANT_IDLE_S": str(idle_s),
        "FACTSTREAM_EDITOR_GROUNDING": "true",
    }
    dep = Deployment(base, workdir / f"n{n}", stub=True, **env)
    documents = n * chunks
    texts = stream_documents(clark, max(documents, warm_docs), ["x"])
    warm_names = [f"warm-{i}" for i in range(warm)]
    fresh_names = [f"fresh-{i:07d}" for i in range(n)]
    out: dict[str, Any] = {
        "n": n,
        "documents": documents,
        "chunks": chunks,
        "warm": warm,
        "warm_docs": warm_docs,
    }
    try:
        dep.start_stub(stub_rules(clark), latency_ms)
        await dep.create_topics()
        worker = dep.start_worker()
        await dep.publish(_chunks(texts[:warm], "w0-", warm_names, 1))  # warm-up, untimed
        await _wait(dep, port, warm, timeout_s=900)
        rss = {"worker_start": rss_mib(worker.pid)}
        if weaviate_pid:
            rss["weaviate_start"] = rss_mib(weaviate_pid)
            out["weaviate_open_files"] = {"start": _open_files(weaviate_pid)}
        # 1. warm namespaces: a fixed sample, its two halves timed apart
        started = time.monotonic()
        await dep.publish(_chunks(texts[:warm_docs], "w-", warm_names, chunks))
        half = warm + warm_docs // 2
        middle = await _wait(dep, port, half, timeout_s=600 + warm_docs)
        done = await _wait(dep, port, warm + warm_docs, timeout_s=600 + warm_docs)
        out["warm_docs_per_s"] = round(warm_docs / (done - started), 2)
        out["warm_docs_per_s_halves"] = [
            round((warm_docs // 2) / (middle - started), 2),
            round((warm_docs - warm_docs // 2) / (done - middle), 2),
        ]
        rss["worker_after_warm"] = rss_mib(worker.pid)
        if weaviate_pid:
            rss["weaviate_after_warm"] = rss_mib(weaviate_pid)
        # 2. fresh namespaces, sampled at each tenth
        started = time.monotonic()
        await dep.publish(_chunks(texts[:documents], "f-", fresh_names, chunks))
        out["fresh_tenths"], done = await _tenths(
            dep, port, worker.pid, (warm + warm_docs, n, chunks), started
        )
        out["fresh_docs_per_s"] = round(documents / (done - started), 2)
        out["fresh_over_warm"] = round(out["fresh_docs_per_s"] / out["warm_docs_per_s"], 3)
        rss["worker_after_fresh"] = rss_mib(worker.pid)
        if weaviate_pid:
            rss["weaviate_after_fresh"] = rss_mib(weaviate_pid)
            out["weaviate_open_files"]["after_fresh"] = _open_files(weaviate_pid)
        out["series_exported"] = await _series(port)
        # 3. tenant creation
        out["tenant_create_ms"] = await _tenant_creation_ms(dep.settings, tenants)
        # 4. deactivation
        fresh = set(fresh_names)
        out["deactivated"], deactivate_s = await _deactivate(dep.settings, fresh)
        out["deactivate_s"] = round(deactivate_s, 2)
        out["fresh_tenant_status"] = _statuses(dep.settings, fresh)
        if weaviate_pid:
            files = out["weaviate_open_files"]
            settled = await _settle(weaviate_pid, rss["weaviate_start"], files["start"], settle_s)
            out["weaviate_settling"] = settled
            rss["weaviate_after_deactivation"] = settled[-1]["rss_mib"]
            files["after_deactivation"] = settled[-1]["open_files"]
        rss["worker_after_deactivation"] = rss_mib(worker.pid)
        out["rss_mib"] = rss
        grown = rss["worker_after_fresh"] - rss["worker_after_warm"]
        out["worker_kib_per_fresh_namespace"] = round(grown * 1024 / n, 2)
        out["worker_kib_per_namespace_second_half"] = _slope_kib(out["fresh_tenths"])
        if weaviate_pid:
            w = rss
            out["weaviate_kib_per_active_namespace"] = round(
                (w["weaviate_after_fresh"] - w["weaviate_after_warm"]) * 1024 / n, 2
            )
            out["weaviate_kib_per_inactive_namespace"] = round(
                (w["weaviate_after_deactivation"] - w["weaviate_after_warm"]) * 1024 / n, 2
            )
            out["weaviate_after_deactivation_over_start"] = round(
                w["weaviate_after_deactivation"] / w["weaviate_start"], 3
            )
            # the warm sample's facts stay in the warm (active) tenants: the store before
            # any fresh namespace is the start the deactivation can come back to
            out["weaviate_after_deactivation_over_after_warm"] = round(
                w["weaviate_after_deactivation"] / w["weaviate_after_warm"], 3
            )
        # 5. placement map the planner proposes for these namespaces
        partitions = dep.settings.worker.partitions
        planned = plan({ns: chunks for ns in fresh_names + warm_names}, partitions).placement
        body = orjson.dumps({"namespaces": planned.namespaces, "partitions": partitions})
        out["placement_map"] = {"entries": len(planned.namespaces), "bytes": len(body)}
        # 6. first ask on an inactive namespace
        out["ask_ms"] = await _asks(dep.settings, fresh_names[:asks], data)
        out["ask_p95_goal_met"] = out["ask_ms"]["first_inactive"]["p95_ms"] <= 250.0
    finally:
        await dep.close()
    return out


async def _tenths(
    dep: Deployment, port: int, worker: int, counts: tuple[int, int, int], started: float
) -> tuple[list[dict[str, float]], float]:
    """Wait for the fresh documents a tenth of the namespaces at a time (``counts``: the
    documents handled before, N, chunks each): at each, the namespaces done, seconds since
    ``started``, the worker's RSS; and the last moment."""
    before, n, chunks = counts
    tenths, done = [], started
    for k in range(1, 11):
        namespaces = n * k // 10
        done = await _wait(dep, port, before + namespaces * chunks, timeout_s=600 + n * chunks)
        tenths.append(
            {"namespaces": namespaces, "s": round(done - started, 1), "rss_mib": rss_mib(worker)}
        )
        typer.echo(f"fresh {tenths[-1]}")  # a long run shows where it is
    return tenths, done


def _slope_kib(tenths: list[dict[str, float]]) -> float:
    """The worker's RSS growth per namespace over the second half of the fresh namespaces
    (least squares, KiB each): the processing's one-off growth is in the first half."""
    half = tenths[len(tenths) // 2 - 1 :]
    xs, ys = [t["namespaces"] for t in half], [t["rss_mib"] * 1024 for t in half]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    var = sum((x - mx) ** 2 for x in xs)
    return round(sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var, 3)


def _plot(results: list[dict[str, Any]], path: Path) -> None:
    import matplotlib  # noqa: PLC0415 - only when plotting

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    ns = [r["n"] for r in results]
    figures = {
        "fresh / warm docs/s": [r["fresh_over_warm"] for r in results],
        "tenant creation p50 ms": [r["tenant_create_ms"]["p50_ms"] for r in results],
        "worker KiB / fresh namespace": [r["worker_kib_per_fresh_namespace"] for r in results],
        "Weaviate KiB / active ns": [r.get("weaviate_kib_per_active_namespace") for r in results],
        "Weaviate KiB / inactive ns": [
            r.get("weaviate_kib_per_inactive_namespace") for r in results
        ],
        "series exported": [r["series_exported"] for r in results],
        "placement map entries": [r["placement_map"]["entries"] for r in results],
        "first ask (inactive) p95 ms": [r["ask_ms"]["first_inactive"]["p95_ms"] for r in results],
    }
    sampled = [r.get("warm_docs") is not None for r in results]
    fig, axes = plt.subplots(2, 4, figsize=(16, 7), dpi=100)
    for ax, (title, values) in zip(axes.flat, figures.items(), strict=True):
        ys = [v if v is not None else float("nan") for v in values]
        ax.plot(ns, ys, color="tab:blue", alpha=0.4)
        for mark, kind in (("o", True), ("x", False)):
            ax.plot(
                [x for x, k in zip(ns, sampled, strict=True) if k is kind],
                [y for y, k in zip(ys, sampled, strict=True) if k is kind],
                mark,
                color="tab:blue",
            )
        ax.set_xscale("log")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("N namespaces")
        ax.grid(True, alpha=0.3)
    fig.suptitle("o: warm baseline a fixed sample (--warm-docs); x: as many documents as fresh")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


async def run(
    base: Settings,
    ns: list[int],
    *,
    chunks: int,
    warm: int,
    warm_docs: int,
    latency_ms: float,
    tenants: int,
    asks: int,
    data: Path,
    idle_s: float,
    settle_s: float,
    own: bool,
    weaviate_env: dict[str, str] | None = None,
) -> dict[str, Any]:
    report = new_report("namespaces")
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-namespaces-") as tmp:
        for n in sorted(ns):
            started = time.monotonic()
            result = await _one(
                base,
                Path(tmp),
                n,
                chunks=chunks,
                warm=warm,
                warm_docs=warm_docs,
                latency_ms=latency_ms,
                tenants=tenants,
                asks=min(asks, n),
                data=data,
                idle_s=idle_s,
                settle_s=settle_s,
                own=own,
                weaviate_env=weaviate_env or {},
            )
            result["load_avg_at_end"] = [round(v, 2) for v in os.getloadavg()]
            result["bench_s"] = round(time.monotonic() - started, 1)
            results.append(result)
            typer.echo(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
            save(report, results, latency_ms)  # after each N: a long run keeps what it did
    return report


def save(report: dict[str, Any], results: list[dict[str, Any]], latency_ms: float) -> Path:
    """Write the runs so far as ``<stamp>-namespaces.json`` with their plot beside it."""
    report["namespaces"] = {
        "lm_latency_ms": latency_ms,
        "caveat": "shared 2-core machine, loaded (load_avg_at_start); Weaviate: see each run",
        "runs": results,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{report['timestamp']}-namespaces.json"
    path.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    _plot(results, path.with_suffix(".png"))
    return path


def plot_against_n(files: list[Path]) -> Path:
    """One plot of each figure against N from the runs of several results files (a later
    file's run of the same N replaces an earlier one's); written beside the latest file."""
    by_n: dict[int, dict[str, Any]] = {}
    for file in sorted(files):
        for result in orjson.loads(file.read_bytes())["namespaces"]["runs"]:
            by_n[result["n"]] = {**result, "from": file.name}
    path = max(files).with_name(max(files).stem + "-against-n.png")
    _plot([by_n[n] for n in sorted(by_n)], path)
    return path


def main(
    n: Annotated[list[int], typer.Option(help="Namespaces (repeat for several).")] = [10_000],  # noqa: B006
    chunks: Annotated[int, typer.Option(help="Chunks (documents) per conversation.")] = 2,
    warm: Annotated[int, typer.Option(help="Warm namespaces of the baseline.")] = 4,
    warm_docs: Annotated[
        int, typer.Option(help="Documents into the warm namespaces (the baseline's sample).")
    ] = 600,
    lm_latency: Annotated[float, typer.Option(help="Stub LM ms per call.")] = 0.0,
    tenants: Annotated[int, typer.Option(help="Tenants created one at a time, timed.")] = 50,
    asks: Annotated[int, typer.Option(help="Inactive namespaces asked.")] = 50,
    data: Annotated[Path, typer.Option(help="CLARK-News data folder.")] = DEFAULT_DATA,
    idle_s: Annotated[float, typer.Option(help="The worker's tenant idle time (0: none).")] = 30,
    settle_s: Annotated[float, typer.Option(help="Most seconds Weaviate settles after.")] = 300,
    weaviate_env: Annotated[
        list[str], typer.Option(help="KEY=VALUE for the private Weaviate (repeat).")
    ] = [],  # noqa: B006
    plot_from: Annotated[
        list[Path], typer.Option(help="Only plot the runs of these results files against N.")
    ] = [],  # noqa: B006
    shared_weaviate: Annotated[
        bool, typer.Option(help="Use the shared Weaviate, not a private one per N.")
    ] = False,
) -> None:
    """Documents into N fresh namespaces beside a few warm ones (issue 40)."""
    logging.basicConfig(level=logging.WARNING)
    if plot_from:
        typer.echo(f"wrote {plot_against_n(plot_from)}")
        return
    base = Settings()
    report = asyncio.run(
        run(
            base,
            n,
            chunks=chunks,
            warm=warm,
            warm_docs=warm_docs,
            latency_ms=lm_latency,
            tenants=tenants,
            asks=asks,
            data=data,
            idle_s=idle_s,
            settle_s=settle_s,
            own=not shared_weaviate,
            weaviate_env=dict(item.split("=", 1) for item in weaviate_env),
        )
    )
    path = save(report, report["namespaces"]["runs"], lm_latency)
    typer.echo(f"wrote {path} and {path.with_suffix('.png')}")


if __name__ == "__main__":
    typer.run(main)
