"""What a single ask costs at 100k facts in units that move little with the load (issue 37).

    python -m bench.ask_cost --keep PREFIX [--facts 100000] [--queries 200]

On a namespace filled as ``bench.ask`` fills it (``--keep``: one filled before), asks the
CLARK-News questions through ``QueryEngine.retrieve`` (the ask benchmark's path, no
generation) with each variant of the question's embedding (``_VARIANTS``: a real embedder
loaded with those settings, no question cache), and times beside them the question's
embedding alone, the store's search alone and an idle pause of ``_IDLE_S``, in a
rotating order so that the machine's load falls on all alike. For each it records the
wall time and the CPU: this process's threads (all, and the event loop's alone), and
Weaviate's process (which other sessions share: the idle pause gives the rate it burns
while we ask nothing, subtracted in ``weaviate_cpu_ms_own``). Weaviate reads and texts
embedded are counted (``factstream.tally``). Writes ``<stamp>-ask-cost.json``.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import typer

from bench import kept
from bench.ask import _engine
from bench.measure import summary_ms
from factstream.ask.query import AskRequest
from factstream.ask.valid_time import question_valid_time
from factstream.embed.factory import load_embedder
from factstream.tally import Tally, counting
from factstream_lab import provenance

__all__ = ["main"]

_NAMESPACE = kept.NAMESPACE
_IDLE_S = 0.02
_TICK = os.sysconf("SC_CLK_TCK")
# (name, question_threads, question_inline): the question session's threads, and whether
# the event loop's thread runs the model (no hand-off to the question thread).
_VARIANTS = (
    ("retrieve, 2 model threads (default)", 2, False),
    ("retrieve, 1 model thread", 1, False),
    ("retrieve, 1 model thread, inline", 1, True),
)


def _cpu_s(pid: int | None) -> float:
    """CPU seconds of process ``pid`` so far (user + system, all threads); 0 without one."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


class _Costs:
    """Per part: wall, this process's CPU, the loop thread's CPU, Weaviate's CPU, counts."""

    def __init__(self, weaviate_pid: int | None) -> None:
        self.pid = weaviate_pid
        self.rows: dict[str, list[tuple[float, float, float, float]]] = {}
        self.tallies: dict[str, Tally] = {}

    async def timed(self, name: str, part: Callable[[], Awaitable[object]], keep: bool) -> None:
        tally = self.tallies.setdefault(name, Tally())
        w0, p0, t0 = _cpu_s(self.pid), time.process_time(), time.thread_time()
        started = time.perf_counter()
        with counting(tally if keep else Tally()):
            await part()
        wall = time.perf_counter() - started
        row = (wall, time.process_time() - p0, time.thread_time() - t0, _cpu_s(self.pid) - w0)
        if keep:
            self.rows.setdefault(name, []).append(row)

    def summary(self) -> dict[str, Any]:
        idle = self.rows.get("idle pause")
        idle_rate = sum(r[3] for r in idle) / sum(r[0] for r in idle) if idle else 0.0
        out: dict[str, Any] = {"weaviate_idle_cpu_per_s": round(idle_rate, 4)}
        for name, rows in self.rows.items():
            n = len(rows)
            weaviate = sum(r[3] for r in rows) / n
            own = weaviate - idle_rate * sum(r[0] for r in rows) / n
            out[name] = {
                "wall": summary_ms([r[0] for r in rows]),
                "process_cpu_ms_mean": round(sum(r[1] for r in rows) / n * 1000, 3),
                "loop_thread_cpu_ms_mean": round(sum(r[2] for r in rows) / n * 1000, 3),
                "weaviate_cpu_ms_mean": round(weaviate * 1000, 3),
                "weaviate_cpu_ms_own": round(own * 1000, 3),
                "per_question": {k: round(v / n, 3) for k, v in self.tallies[name].items()},
            }
        return out


async def _run(facts: int, queries: int, out: Path, data: Path, keep: str | None) -> dict[str, Any]:
    del out
    async with kept.filled(facts, data, keep, "ask-cost") as ready:
        clients, settings = ready.clients, ready.settings
        embedders = {
            name: await load_embedder(
                settings.embed.model_copy(
                    update={"question_threads": threads, "question_inline": inline}
                ),
                settings.local.cache_dir,
            )
            for name, threads, inline in _VARIANTS
        }
        default = next(iter(embedders.values()))
        api = settings.api
        costs = _Costs(ready.weaviate_pid)
        questions = kept.asked(data, queries)
        for i, text in enumerate(questions):
            request = AskRequest(text, _NAMESPACE)
            valid = question_valid_time(text, valid=None, as_of=None, now=datetime.now(UTC))
            vector = await default.embed(valid.search_text)

            def search(vector: list[float] = vector, valid: Any = valid) -> Awaitable[object]:
                return clients.store.search(
                    _NAMESPACE,
                    valid.search_text,
                    vector,
                    as_of=None,
                    top_k=api.top_k,
                    min_similarity=api.min_similarity,
                    alpha=api.alpha,
                    valid=valid.interval,
                )

            parts: dict[str, Callable[[], Awaitable[object]]] = {
                name: partial(_engine(clients, settings, embedder).retrieve, request, {})
                for name, embedder in embedders.items()
            }
            parts["the question's embedding alone (default)"] = partial(
                default.embed, valid.search_text
            )
            parts["the store's search alone"] = search
            parts["idle pause"] = partial(asyncio.sleep, _IDLE_S)
            names = list(parts)
            for name in names[i % len(names) :] + names[: i % len(names)]:
                await costs.timed(name, parts[name], keep=i >= kept.WARM_UP)
        for embedder in embedders.values():
            await embedder.aclose()
        return {
            **ready.result,
            "commit": provenance.commit(),
            "queries": queries,
            "load_avg_end": [round(x, 2) for x in os.getloadavg()],
            "costs": costs.summary(),
        }


main = kept.cli(_run, "ask-cost", "Fill, measure each part's wall and CPU, write the results.")

if __name__ == "__main__":
    typer.run(main)
