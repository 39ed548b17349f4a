"""The namespace the single-ask diagnostics ask in (bench.ask_parts, bench.ask_tail): filled
as the ask benchmark fills it, in a fresh collection or one kept under a prefix
(``--keep``) and filled only up to what it lacks."""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from bench.ask import _fill, _pool, _weaviate_pid
from bench.corpus import DEFAULT_DATA, questions
from bench.harness import Deployment
from bench.measure import wait_idle
from bench.report import write_named
from factstream.clients import Clients, open_clients
from factstream.config import Settings, load_settings
from factstream_lab import provenance

__all__ = ["NAMESPACE", "WARM_UP", "Filled", "asked", "cli", "filled", "rotated"]

NAMESPACE = "ask"
WARM_UP = 10

Keep = Annotated[
    str | None,
    typer.Option(help="Collection prefix to fill up to --facts and keep (else a fresh one)."),
]


@dataclass
class Filled:
    """The clients on the filled namespace, and how long filling and settling took."""

    clients: Clients
    settings: Settings
    weaviate_pid: int | None
    result: dict[str, Any]  # the results file's head: stamp, facts, load, settle, load average


def asked(data: Path, queries: int) -> list[str]:
    """The CLARK-News questions, cycled: ``WARM_UP`` first, then ``queries``."""
    return (questions(data) * (1 + (queries + WARM_UP) // 428))[: queries + WARM_UP]


async def rotated(
    i: int, parts: dict[str, Callable[[], Awaitable[object]]], times: dict[str, list[float]]
) -> None:
    """Run question ``i``'s parts, the order turned by one a question so that the machine's
    load falls on all alike; their seconds go to ``times`` after the warm-up."""
    names = list(parts)
    for name in names[i % len(names) :] + names[: i % len(names)]:
        started = time.perf_counter()
        await parts[name]()
        if i >= WARM_UP:
            times.setdefault(name, []).append(time.perf_counter() - started)


@asynccontextmanager
async def filled(facts: int, data: Path, keep: str | None, tag: str) -> AsyncIterator[Filled]:
    """Clients on a namespace of ``facts`` facts, Weaviate settled; a fresh collection is
    dropped after, a kept one stays for the next run (no process, no topic)."""
    base = load_settings()
    env = {"FACTSTREAM_STORE_COLLECTION_PREFIX": keep} if keep else {}
    dep = Deployment(base, Path(tempfile.mkdtemp(prefix=f"{tag}-")), stub=False, **env)
    try:
        async with open_clients(dep.settings) as clients:
            counts = await clients.store.count_facts(NAMESPACE)
            loaded = counts.true + counts.false if keep else 0
            started = time.perf_counter()
            if loaded < facts:
                pool = await _pool(clients, data, facts)
                await _fill(clients, pool, loaded, facts, lambda _n: None)
            load_s = time.perf_counter() - started
            pid = _weaviate_pid(base)
            settle_s = await wait_idle(pid)
            result = {
                "timestamp": datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ"),
                "facts": facts,
                "load_s": round(load_s, 1),
                "settle_s": settle_s,
                "load_avg_before": [round(x, 2) for x in os.getloadavg()],
            }
            yield Filled(clients, dep.settings, pid, result)
            result["load_avg_after"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        if not keep:
            await dep.close()


Run = Callable[[int, int, Path, Path, str | None], Coroutine[Any, Any, dict[str, Any]]]


def cli(run: Run, kind: str, doc: str) -> Callable[..., None]:
    """A typer command that runs ``run`` (it returns the result, its head from ``filled``)
    and writes it as ``out/<stamp>-<kind>.json``, with the commit that made it."""

    def main(
        facts: int = 100_000,
        queries: int = 200,
        out: Path = Path("results/bench"),
        data: Path = DEFAULT_DATA,
        keep: Keep = None,
    ) -> None:
        result = asyncio.run(run(facts, queries, out, data, keep))
        write_named(provenance.stamped(result), out, kind)

    main.__doc__ = doc
    return main
