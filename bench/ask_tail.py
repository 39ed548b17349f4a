"""What makes a single ask's p95 (not its p50) high at 100k facts (issue 26).

    python -m bench.ask_tail --keep PREFIX [--facts 100000] [--queries 200]

Fills a namespace as ``bench.ask`` does (or reuses one ``--keep`` filled), then asks the
CLARK-News questions through ``QueryEngine.retrieve``, the ask benchmark's path, and
records for each question what could make it slow: the interpreter's garbage collection
during it (``gc.callbacks``), the time this process's threads and Weaviate's waited for
a core (``/proc/*/task/*/schedstat``, the run-queue delay), the machine's CPU pressure
(``/proc/pressure/cpu``), and the thread hop of the embedding (the embed call's wall
time less the model's own time in its thread). Beside it, interleaved in a rotating
order on the same questions: the retrieval with the question embedded by embedders
loaded with other settings (on the question thread or inline on the event loop's,
``FACTSTREAM_EMBED_QUESTION_INLINE``; in a session of 2 or 1 threads,
``FACTSTREAM_EMBED_QUESTION_THREADS``), and Weaviate's hybrid query with and without the
distance cut (the same facts or not). Writes
``<stamp>-ask-tail.json``: p50 / p95 of each, and the means of the slowest 10% of the
questions against the rest.
"""

from __future__ import annotations

import gc
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
from bench.measure import percentile, summary_ms
from factstream.ask.query import AskRequest
from factstream.ask.valid_time import question_valid_time
from factstream.embed.factory import load_embedder
from factstream.store import weaviate_store as ws

__all__ = ["main"]

_NAMESPACE = kept.NAMESPACE
_WARM_UP = kept.WARM_UP
# The question's embedding as configured by (question_threads, question_inline), each a
# real embedder loaded with those settings (the onnx runtime).
_VARIANTS = (
    ("retrieve, question thread, 2 model threads (before)", 2, False),
    ("retrieve, inline, 2 model threads", 2, True),
    ("retrieve, question thread, 1 model thread", 1, False),
    ("retrieve, inline, 1 model thread", 1, True),
)


def _run_delay_s(pid: int | str, only: int | None = None) -> float:
    """Seconds the threads of ``pid`` (or its thread ``only``) have waited on a run queue
    (schedstat, field 2); summed over threads, waits at the same time add up."""
    total = 0
    base = Path(f"/proc/{pid}/task")
    for task in [base / str(only)] if only is not None else base.iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue  # a thread that ended meanwhile
    return total / 1e9


def _pressure_s() -> float:
    """The machine's CPU pressure: seconds some task waited for a core (PSI total)."""
    try:
        line = Path("/proc/pressure/cpu").read_text().splitlines()[0]
    except OSError:
        return 0.0
    return int(line.rsplit("total=", 1)[1]) / 1e6


class _GcClock:
    """Seconds spent in garbage collection, and collections of each generation."""

    def __init__(self) -> None:
        self.seconds, self.started, self.gen2 = 0.0, 0.0, 0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self.started
            self.gen2 += info.get("generation") == 2


async def _measure(clients: Any, settings: Any, asked: list[str], weaviate: int | None) -> Any:
    store, embedder = clients.store, clients.embedder
    engine = _engine(clients, settings)
    facts = store._facts.with_tenant(_NAMESPACE)  # noqa: SLF001 - the store's own query
    alpha, floor = settings.api.alpha, settings.api.min_similarity
    inner = {"seconds": 0.0}
    encode = embedder.encode

    def timed_encode(*args: Any) -> Any:
        started = time.perf_counter()
        try:
            return encode(*args)
        finally:
            inner["seconds"] += time.perf_counter() - started

    embedder.encode = timed_encode  # the thread's own time, for the hop

    variants = {}
    for name, threads, inline in _VARIANTS:
        update = {"question_threads": threads, "question_inline": inline}
        loaded = await load_embedder(
            settings.embed.model_copy(update=update), settings.local.cache_dir
        )
        variants[name] = _engine(clients, settings, loaded)
    gc_clock = _GcClock()
    gc.callbacks.append(gc_clock)
    rows: list[dict[str, float]] = []
    times: dict[str, list[float]] = {}
    same_cut: list[bool] = []
    cut = ws._max_distance(floor, alpha)  # noqa: SLF001
    try:
        for i, text in enumerate(asked):
            valid = question_valid_time(text, valid=None, as_of=None, now=datetime.now(UTC))
            vector = list(await embedder.embed(text))
            flt = ws._and(  # noqa: SLF001
                ws._truth_filter(None, include_false=False),  # noqa: SLF001
                ws._valid_filter(valid.interval, None),  # noqa: SLF001
            )

            async def hybrid(
                cut: float | None,
                t: str = valid.search_text,
                vector: list[float] = vector,
                flt: Any = flt,
            ) -> list[str]:
                got = await facts.query.hybrid(
                    t,
                    vector=vector,
                    alpha=alpha,
                    query_properties=["text"],
                    filters=flt,
                    limit=settings.api.top_k,
                    max_vector_distance=cut,
                    include_vector=True,
                    return_properties=["record"],
                )
                return [str(o.uuid) for o in got.objects]

            async def current(t: str = text) -> None:
                timings: dict[str, float] = {}
                own, wv = _run_delay_s("self"), _run_delay_s(weaviate) if weaviate else 0.0
                main = _run_delay_s("self", os.getpid())
                psi, gcs, enc = _pressure_s(), gc_clock.seconds, inner["seconds"]
                started = time.perf_counter()
                await engine.retrieve(AskRequest(t, _NAMESPACE), timings)
                took = time.perf_counter() - started
                rows.append(
                    {
                        "total": took,
                        "embed": timings["embed"],
                        "search": timings["retrieve"],
                        "hop": timings["embed"] - (inner["seconds"] - enc),
                        "gc": gc_clock.seconds - gcs,
                        "loop_thread_run_delay": _run_delay_s("self", os.getpid()) - main,
                        "own_threads_run_delay": _run_delay_s("self") - own,
                        "weaviate_run_delay": (_run_delay_s(weaviate) - wv) if weaviate else 0.0,
                        "cpu_pressure": _pressure_s() - psi,
                    }
                )

            async def variant(name: str, t: str = text) -> None:
                await variants[name].retrieve(AskRequest(t, _NAMESPACE), {})

            parts: dict[str, Callable[[], Awaitable[object]]] = {
                "retrieve (the benchmark's path)": current,
                **{name: partial(variant, name) for name in variants},
                "weaviate hybrid, with the distance cut": partial(hybrid, cut),
                "weaviate hybrid, no distance cut": partial(hybrid, None),
            }
            await kept.rotated(i, parts, times)
            same_cut.append(await hybrid(cut) == await hybrid(None))
    finally:
        gc.callbacks.remove(gc_clock)
        embedder.encode = encode
        for engine_ in variants.values():
            await engine_._embedder.aclose()  # noqa: SLF001
    return times, rows[_WARM_UP:], same_cut, gc_clock.gen2


def _tail(rows: list[dict[str, float]]) -> dict[str, Any]:
    """Means (ms) of each recorded quantity over the slowest 10% and over the rest."""
    cut = percentile([r["total"] for r in rows], 0.9)
    slow = [r for r in rows if r["total"] >= cut]
    rest = [r for r in rows if r["total"] < cut]

    def means(group: list[dict[str, float]]) -> dict[str, float]:
        return {k: round(sum(r[k] for r in group) / len(group) * 1000, 2) for k in rows[0]}

    return {
        "slowest_10pct": {"count": len(slow), **means(slow)},
        "the_rest": {"count": len(rest), **means(rest)},
        "per_part": {k: summary_ms([r[k] for r in rows]) for k in ("total", "embed", "search")},
        "questions_with_gc": sum(r["gc"] > 0 for r in rows),
    }


async def _run(
    facts: int, queries: int, _out: Path, data: Path, keep: str | None
) -> dict[str, Any]:
    async with kept.filled(facts, data, keep, "ask-tail") as ready:
        times, rows, same, gen2 = await _measure(
            ready.clients, ready.settings, kept.asked(data, queries), ready.weaviate_pid
        )
    return {
        **ready.result,
        "gc_thresholds": gc.get_threshold(),
        "gen2_collections": gen2,
        "parts": {name: summary_ms(seconds) for name, seconds in times.items()},
        "distance_cut_same_ids": f"{sum(same)} of {len(same)}",
        "tail": _tail(rows),
    }


main = kept.cli(
    _run, "ask-tail", "Ask, record what each question waited on, write the results file."
)

if __name__ == "__main__":
    typer.run(main)
