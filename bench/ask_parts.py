"""Where a single ask's time goes at 100k facts (issue 26): the parts, side by side.

    python -m bench.ask_parts [--facts 100000] [--queries 200] [--out results/bench]

Fills one namespace the way the ask benchmark does (``bench.ask``: synthetic facts with
real vectors, batch-inserted), waits for Weaviate to settle, then asks the CLARK-News
questions. For each question, in a rotating order so that the machine's load falls on
all alike, it times: the whole retrieval (``QueryEngine.retrieve``, the benchmark's path),
embedding the question alone, the namespace check alone (a tenant listing), the store's
search alone, and the store's Weaviate query in variants (as the store sends it; without
vectors and records returned; without filters; dense only; BM25 only), and the Python
work on the candidates (``_hits``). Then a cProfile of the retrieval on the event loop's
thread. Writes ``<stamp>-ask-parts.json`` (and ``-ask-parts.prof.txt``).
"""

from __future__ import annotations

import asyncio
import cProfile
import io
import pstats
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import typer
from weaviate.classes.query import MetadataQuery

from bench import kept
from bench.ask import _engine
from bench.measure import summary_ms
from factstream.ask.query import AskRequest
from factstream.ask.valid_time import question_valid_time
from factstream.store import weaviate_store as ws
from factstream.store.base import SearchHit

__all__ = ["main"]

_NAMESPACE = kept.NAMESPACE
_WARM_UP = kept.WARM_UP
_PROFILED = 100


@contextmanager
def _as_before() -> Iterator[None]:
    """The store as it searched before issue 26's fix (commit 499392b): top_k x overfetch
    candidates for every search, and every candidate's record parsed."""
    first, hits = ws._first_limit, ws._hits  # noqa: SLF001

    def overfetched(top_k: int, overfetch: int, *_: object, **__: object) -> int:
        return min(top_k * overfetch, ws.MAX_RESULTS)

    def every(*args: Any, **kw: Any) -> tuple[list[SearchHit], bool]:
        most = args[6] if len(args) > 6 else kw.pop("most", None)
        parsed, _sure = hits(*args[:6], **kw)
        return parsed[:most], True

    ws._first_limit, ws._hits = overfetched, every  # noqa: SLF001
    try:
        yield
    finally:
        ws._first_limit, ws._hits = first, hits  # noqa: SLF001


async def _measure(clients: Any, settings: Any, asked: list[str]) -> dict[str, Any]:
    store, embedder = clients.store, clients.embedder
    engine = _engine(clients, settings)
    facts = store._facts.with_tenant(_NAMESPACE)  # noqa: SLF001 - the store's own query
    top_k, alpha, floor = settings.api.top_k, settings.api.alpha, settings.api.min_similarity
    limit = ws._first_limit(top_k, settings.store.search_overfetch, None, None)  # noqa: SLF001

    async def query(text: str, vector: list[float], **kw: Any) -> Any:
        valid = question_valid_time(text, valid=None, as_of=None, now=datetime.now(UTC))
        flt = ws._and(  # noqa: SLF001
            ws._truth_filter(None, include_false=False),  # noqa: SLF001
            ws._valid_filter(valid.interval, None),  # noqa: SLF001
        )
        args: dict[str, Any] = {
            "alpha": alpha,
            "query_properties": ["text"],
            "filters": flt,
            "limit": limit,
            "max_vector_distance": ws._max_distance(floor, alpha),  # noqa: SLF001
            "include_vector": True,
            "return_properties": ["record"],
            "return_metadata": MetadataQuery(score=True),
        }
        args.update(kw)
        return await facts.query.hybrid(valid.search_text, vector=vector, **args)

    times: dict[str, list[float]] = {}
    timings_embed: list[float] = []
    timings_search: list[float] = []
    candidates: list[int] = []

    for i, text in enumerate(asked):
        vector = list(await embedder.embed(text))

        async def retrieve(t: str = text) -> None:
            timings: dict[str, float] = {}
            await engine.retrieve(AskRequest(t, _NAMESPACE), timings)
            timings_embed.append(timings["embed"])
            timings_search.append(timings["retrieve"])

        async def before(t: str = text) -> None:
            # The namespace listed while the question is embedded, as before the fix.
            request = AskRequest(t, _NAMESPACE)
            with _as_before():
                await asyncio.gather(
                    engine.require_namespace(_NAMESPACE),
                    engine._search_facts(  # noqa: SLF001
                        request,
                        top_k,
                        None,
                        strip_time=engine._strip_time,  # noqa: SLF001
                        planner=engine._planner,  # noqa: SLF001
                    ),
                )

        async def hits(t: str = text, v: list[float] = vector) -> float:
            got = await query(t, v)
            started = time.perf_counter()
            ws._hits(got.objects, v, None, None, floor, None, top_k)  # noqa: SLF001
            candidates.append(len(got.objects))
            return time.perf_counter() - started

        valid = question_valid_time(text, valid=None, as_of=None, now=datetime.now(UTC))
        search = partial(
            store.search,
            _NAMESPACE,
            valid.search_text,
            vector,
            as_of=None,
            top_k=top_k,
            min_similarity=floor,
            alpha=alpha,
            valid=valid.interval,
        )
        overfetched = top_k * settings.store.search_overfetch
        parts: dict[str, Callable[[], Awaitable[object]]] = {
            "retrieve (the benchmark's path)": retrieve,
            "retrieve as before the fix (499392b)": before,
            "embed the question": partial(embedder.embed, text),
            "namespace check (tenant listing)": store.namespaces,
            "store.search": search,
            "weaviate hybrid, as the store asks": partial(query, text, vector),
            "weaviate hybrid, top_k x overfetch candidates": partial(
                query, text, vector, limit=overfetched
            ),
            "weaviate hybrid, no vectors or record returned": partial(
                query, text, vector, include_vector=False, return_properties=[]
            ),
            "weaviate hybrid, no filters": partial(query, text, vector, filters=None),
            "weaviate hybrid, dense only (alpha 1)": partial(query, text, vector, alpha=1.0),
            "weaviate hybrid, BM25 only (alpha 0)": partial(query, text, vector, alpha=0.0),
        }
        await kept.rotated(i, parts, times)
        python_s = await hits()
        if i >= _WARM_UP:
            times.setdefault("python on the candidates (_hits)", []).append(python_s)
    result: dict[str, Any] = {name: summary_ms(seconds) for name, seconds in times.items()}
    result["retrieve: its embed timing"] = summary_ms(timings_embed[_WARM_UP:])
    result["retrieve: its search timing"] = summary_ms(timings_search[_WARM_UP:])
    result["candidates per query"] = max(candidates) if candidates else 0
    return result


async def _profile(clients: Any, settings: Any, asked: list[str]) -> str:
    engine = _engine(clients, settings)
    profiler = cProfile.Profile()
    profiler.enable()
    for text in asked:
        await engine.retrieve(AskRequest(text, _NAMESPACE), {})
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(30)
    stats.sort_stats("cumulative").print_stats(40)
    return out.getvalue()


async def _run(facts: int, queries: int, out: Path, data: Path, keep: str | None) -> dict[str, Any]:
    async with kept.filled(facts, data, keep, "ask-parts") as ready:
        questions = kept.asked(data, queries)
        parts = await _measure(ready.clients, ready.settings, questions)
        profile = await _profile(ready.clients, ready.settings, questions[:_PROFILED])
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{ready.result['timestamp']}-ask-parts.prof.txt").write_text(profile)
    return {**ready.result, "parts": parts}


main = kept.cli(_run, "ask-parts", "Fill, measure the parts, write the results file.")

if __name__ == "__main__":
    typer.run(main)
