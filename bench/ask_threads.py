"""The threads of a single ask, by how the question is embedded (issue 26).

    python -m bench.ask_threads --keep PREFIX [--queries 100] [--rounds 3]

On a namespace filled as ``bench.ask`` fills it (``--keep``: one filled before), asks the
CLARK-News questions through ``QueryEngine.retrieve`` with embedders loaded as
``bench.ask_tail``'s variants (on the question thread or inline; a session of 2 or 1
threads), the variants taking turns for ``rounds`` rounds, and counts over each round
what every thread of this process did (``/proc/self/task/*``): CPU seconds, the seconds it
waited on a run queue, the times it was put on a core. Writes ``<stamp>-ask-threads.json``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import typer

from bench import kept
from bench.ask import _engine
from bench.ask_tail import _VARIANTS
from factstream.ask.query import AskRequest
from factstream.embed.factory import load_embedder

__all__ = ["main"]


def _threads() -> tuple[float, float, int]:
    """CPU seconds, run-queue seconds and timeslices, summed over this process's threads."""
    cpu, wait, slices = 0.0, 0.0, 0
    for task in Path("/proc/self/task").iterdir():
        try:
            stat = (task / "stat").read_text().rsplit(")", 1)[1].split()
            sched = (task / "schedstat").read_text().split()
        except OSError:
            continue  # a thread that ended meanwhile
        cpu += (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
        wait, slices = wait + int(sched[1]) / 1e9, slices + int(sched[2])
    return cpu, wait, slices


async def _run(
    facts: int, queries: int, _out: Path, data: Path, keep: str | None, rounds: int = 3
) -> dict[str, Any]:
    async with kept.filled(facts, data, keep, "ask-threads") as ready:
        asked = kept.asked(data, queries)
        engines = {}
        for name, threads, inline in _VARIANTS:
            update = {"question_threads": threads, "question_inline": inline}
            embedder = await load_embedder(
                ready.settings.embed.model_copy(update=update), ready.settings.local.cache_dir
            )
            engines[name] = _engine(ready.clients, ready.settings, embedder)
        counted: dict[str, list[dict[str, float]]] = {name: [] for name in engines}
        try:
            for _ in range(rounds):
                for name, engine in engines.items():
                    for question in asked[: kept.WARM_UP]:
                        await engine.retrieve(AskRequest(question, kept.NAMESPACE), {})
                    before, started = _threads(), time.perf_counter()
                    for question in asked[kept.WARM_UP :]:
                        await engine.retrieve(AskRequest(question, kept.NAMESPACE), {})
                    wall, after = time.perf_counter() - started, _threads()
                    n = len(asked) - kept.WARM_UP
                    counted[name].append(
                        {
                            "wall_ms_per_question": round(wall / n * 1000, 2),
                            "cpu_ms_per_question": round((after[0] - before[0]) / n * 1000, 2),
                            "run_queue_ms_per_question": round(
                                (after[1] - before[1]) / n * 1000, 2
                            ),
                            "timeslices_per_question": round((after[2] - before[2]) / n, 1),
                        }
                    )
        finally:
            for engine in engines.values():
                await engine._embedder.aclose()  # noqa: SLF001
    return {**ready.result, "rounds": counted}


main = kept.cli(_run, "ask-threads", "Ask with each variant in turn, count the threads' work.")

if __name__ == "__main__":
    typer.run(main)
