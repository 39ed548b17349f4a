"""`python -m bench`: run the benchmarks on the real local stack, write the results file,
print the table.

    python -m bench                      # the full set except 1M facts (make bench)
    python -m bench --million            # also ask latency at 1M facts (make bench-1m: only it)
    python -m bench --size smoke         # tiny, to keep them working (CI runs this)
    python -m bench --only tokens --only ask --profile
    python -m bench --only busy --docs 100 --window 1 --window 16 --lm-latency 500
    python -m bench compare OLD.json NEW.json   # every figure's change (bench/compare.py)
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import sys
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from bench import ask, backlog, busy, e2e, embed, throughput, tokens
from bench.corpus import DEFAULT_DATA
from bench.report import RESULTS, busy_goals, new_report, table, write
from bench.sizes import SIZES, Size
from factstream.config import Settings, load_settings
from factstream_lab.stack import manager

__all__ = ["Bench", "busy_size", "main", "run_benchmarks"]

console = Console(width=160) if not Console().is_terminal else Console()


class Bench(StrEnum):
    THROUGHPUT = "throughput"
    TOKENS = "tokens"
    ASK = "ask"
    E2E = "e2e"
    BACKLOG = "backlog"
    ASK_1M = "ask_1m"
    BUSY = "busy"
    EMBED = "embed"


# ask_1m and busy have make targets of their own (make bench-1m, make bench-busy).
DEFAULT_SET = [b for b in Bench if b not in (Bench.ASK_1M, Bench.BUSY)]
Runner = Callable[[Settings, Size, Path, Path, Path], Awaitable[dict[str, Any]]]


def _progress(n: int) -> None:
    if n % 50_000 == 0 or n == 10_000:
        console.print(f"    {n:,} facts loaded")


def _runners(million_facts: int) -> dict[Bench, Runner]:
    return {
        Bench.THROUGHPUT: lambda s, z, w, d, _o: throughput.run(s, z, w, d),
        Bench.TOKENS: lambda s, z, w, d, _o: tokens.run(s, z, w, d),
        Bench.ASK: lambda s, z, w, d, _o: ask.run(s, z, w, d, _progress),
        Bench.E2E: lambda s, z, w, d, _o: e2e.run(s, z, w, d),
        Bench.BACKLOG: lambda s, z, w, d, o: backlog.run(s, z, w, d, o),
        Bench.ASK_1M: lambda s, z, w, d, _o: ask.run_million(
            s, z, w, d, _progress, facts=million_facts
        ),
        Bench.BUSY: lambda s, z, w, d, _o: busy.run(s, z, w, d),
        Bench.EMBED: lambda s, z, w, d, _o: embed.run(s, z, w, d),
    }


async def _one(
    runner: Runner, args: tuple[Settings, Size, Path, Path, Path], profile: Path | None
) -> dict[str, Any]:
    if profile is None:
        return await runner(*args)
    from pyinstrument import Profiler  # noqa: PLC0415 - only with --profile

    profiler = Profiler(async_mode="enabled")
    profiler.start()
    try:
        return await runner(*args)
    finally:
        profiler.stop()
        profile.write_text(profiler.output_text(unicode=True, show_all=False))


async def run_benchmarks(
    settings: Settings,
    size: Size,
    selected: list[Bench],
    *,
    out: Path = RESULTS,
    data: Path = DEFAULT_DATA,
    million_facts: int = ask.MILLION,
    profile: bool = False,
    parallel: bool = False,
) -> tuple[dict[str, Any], Path]:
    """Run ``selected`` at ``size``; returns the report and the results file written.

    ``parallel`` runs them all at once: quicker, and their figures then mean nothing (the
    smoke test uses it to check that every benchmark works).
    """
    report = new_report(size.name)
    stamp, runners = report["timestamp"], _runners(million_facts)
    workdir = Path(tempfile.mkdtemp(prefix="factstream-bench-"))
    out.mkdir(parents=True, exist_ok=True)
    args = (settings, size, workdir, data, out / f"{stamp}-backlog-lag.png")

    async def one(name: Bench) -> None:
        console.print(f"[bold]{name}[/] ({size.name}) ...")
        started = time.monotonic()
        prof = out / f"{stamp}-{name}.pyinstrument.txt" if profile else None
        try:
            result = await _one(runners[name], args, prof)
        except Exception as exc:  # noqa: BLE001 - one failure must not hide the others
            console.print(f"[red]{name} failed:[/] {exc!r}  (logs under {workdir})")
            result = {"error": repr(exc), "trace": traceback.format_exc()}
        result["bench_s"] = round(time.monotonic() - started, 1)
        report["benchmarks"][name.value] = result

    if parallel:
        await asyncio.gather(*(one(name) for name in selected))
    else:
        for name in selected:
            await one(name)
    report["benchmarks"] = {n.value: report["benchmarks"][n.value] for n in selected}
    return report, write(report, out)


class SizeName(StrEnum):
    FULL = "full"
    SMOKE = "smoke"


def cli(
    size: Annotated[
        SizeName, typer.Option(help="full: make bench; smoke: tiny (CI).")
    ] = SizeName.FULL,
    only: Annotated[list[Bench] | None, typer.Option(help="Only this benchmark; repeat.")] = None,
    million: Annotated[
        bool, typer.Option(help="Also ask latency at 1M facts (a Weaviate of its own).")
    ] = False,
    million_facts: Annotated[int, typer.Option(help="Facts of the 1M case.")] = ask.MILLION,
    out: Annotated[Path, typer.Option(help="Where results go.")] = RESULTS,
    data: Annotated[Path, typer.Option(help="CLARK-News folder.")] = DEFAULT_DATA,
    profile: Annotated[bool, typer.Option(help="pyinstrument each benchmark (slower).")] = False,
    docs: Annotated[
        int | None, typer.Option(help="busy: documents of the one namespace (default by size).")
    ] = None,
    window: Annotated[
        list[int] | None, typer.Option(help="busy: a window W to run; repeat (default 1 4 16 32).")
    ] = None,
    lm_latency: Annotated[
        float | None, typer.Option(help="busy: the stub LM's milliseconds per call (500).")
    ] = None,
    dependencies: Annotated[
        list[str] | None,
        typer.Option(help="busy: also run W=16 with this FACTSTREAM_EDITOR_DEPENDENCIES; repeat."),
    ] = None,
    lm_concurrency: Annotated[
        int | None,
        typer.Option(help="busy: the worker's FACTSTREAM_LM_MAX_CONCURRENCY (4 x widest W)."),
    ] = None,
) -> None:
    """Run the benchmarks on the local stack (started if needed) and print the table."""
    logging.basicConfig(level=logging.WARNING)
    settings = load_settings()
    chosen = busy_size(SIZES[size.value], docs, window, lm_latency)
    if lm_concurrency is not None and lm_concurrency < 1:
        raise typer.BadParameter("--lm-concurrency must be at least 1")
    chosen = dataclasses.replace(
        chosen, busy_policies=tuple(dependencies or ()), busy_lm_concurrency=lm_concurrency
    )
    manager.up(settings, list(manager.SERVICE_NAMES))
    selected = list(only or DEFAULT_SET)
    if million and Bench.ASK_1M not in selected:
        selected.append(Bench.ASK_1M)
    report, path = asyncio.run(
        run_benchmarks(
            settings,
            chosen,
            selected,
            out=out,
            data=data,
            million_facts=million_facts,
            profile=profile,
        )
    )
    console.print(table(report))
    if Bench.BUSY.value in report["benchmarks"]:
        console.print(busy_goals(report["benchmarks"][Bench.BUSY.value]))
    console.print(f"results: {path}")
    if any("error" in r for r in report["benchmarks"].values()):
        raise typer.Exit(code=1)


def busy_size(
    size: Size, docs: int | None, windows: list[int] | None, latency_ms: float | None
) -> Size:
    """``size`` with the busy benchmark's figures the command line gave."""
    if docs is not None and docs < 1:
        raise typer.BadParameter("--docs must be at least 1")
    if windows is not None and min(windows, default=1) < 1:
        raise typer.BadParameter("--window must be at least 1")
    return dataclasses.replace(
        size,
        busy_docs=size.busy_docs if docs is None else docs,
        busy_windows=size.busy_windows if not windows else tuple(windows),
        busy_latency_ms=size.busy_latency_ms if latency_ms is None else latency_ms,
    )


def main() -> None:
    """``python -m bench [OPTIONS]`` runs the benchmarks; ``python -m bench compare OLD NEW``
    prints every figure's change between two results files (bench/compare.py)."""
    if sys.argv[1:2] == ["compare"]:
        from bench.compare import main as compare  # noqa: PLC0415

        raise SystemExit(compare(sys.argv[2:]))
    typer.run(cli)
