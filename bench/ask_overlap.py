"""Would the question's keyword side, sent while the question is embedded, shorten an ask?
(issue 37). One filled namespace, one process, the variants taking turns question by
question:

    python -m bench.ask_overlap --keep PREFIX [--facts 100000] [--queries 200]

- ``sequential``: what the store does today: embed the question (the model, not the
  question cache), then one hybrid query (the store's arguments: filters, distance cut,
  13 candidates with records and vectors).
- ``overlap``: the keyword side (BM25, ids and scores of the hybrid's 100-deep keyword
  leg) sent while the question is embedded; then the dense side (ids and distances, 100
  deep, the same distance cut); the two fused here exactly as Weaviate's relative score
  fusion does (``fuse``), and the candidates' records and vectors fetched by id: three
  requests, the first hidden behind the model.
- the keyword side and the dense side alone, as the overlap sends them, for scale, and
  each only as deep as the store's 13 candidates (the dense leg's HNSW ef follows the
  depth: 8 x depth within 100..500, so 500 at 100 deep and 104 at 13).

Weaviate's hybrid (v1.38, ``usecases/traverser/explorer_hybrid.go``) runs its two legs at
once inside one request, each ``QUERY_HYBRID_MAXIMUM_RESULTS`` (100) deep; the vector
leg's distance cut also drops keyword hits outside it; then ``FusionRelativeScore``:
each leg's scores min-max normalised (BM25 score; 1 - distance), weighted (1 - alpha,
alpha), summed per object, sorted by score, ties by the object's last leg's raw score,
then by id. Counted: whether the fused candidates equal the hybrid's (ids, in order) for
every question; and, for legs cut to 13, 30 and 50 (what a lower
``QUERY_HYBRID_MAXIMUM_RESULTS`` would make them, the dense leg as an exact cut of the
100-deep one, which a smaller HNSW ef need not give), how many questions' fused candidates
stay the same (in order, and as a set of ``top_k``). Writes ``<stamp>-ask-overlap.json``.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from functools import cmp_to_key, partial
from pathlib import Path
from typing import Any

import numpy as np
import typer
from weaviate.classes.query import Filter, MetadataQuery

import factstream.store.weaviate_store as ws
from bench import kept
from bench.measure import summary_ms
from factstream.ask.valid_time import question_valid_time

__all__ = ["fuse", "main"]

_NAMESPACE = kept.NAMESPACE
_LEG = 100  # Weaviate's QUERY_HYBRID_MAXIMUM_RESULTS, the depth of each hybrid leg
_SHALLOWER = (13, 30, 50)  # legs as deep as that setting would make them, if lowered


def fuse(
    keyword: Sequence[tuple[str, float]],
    vector: Sequence[tuple[str, float]],
    alpha: float,
    max_distance: float | None,
    limit: int,
) -> list[str]:
    """Weaviate's relative score fusion of a hybrid query's two legs, in float32 as its Go
    code computes it: ``keyword`` (id, BM25 score) and ``vector`` (id, distance), each best
    first; the ids of the first ``limit`` fused results."""
    f32 = np.float32
    if max_distance is not None:
        kept_ids: list[tuple[str, float]] = []
        for oid, dist in vector:
            if f32(dist) > f32(max_distance):
                break
            kept_ids.append((oid, dist))
        vector = kept_ids
        inside = {oid for oid, _ in vector}
        keyword = [(oid, s) for oid, s in keyword if oid in inside]
    legs = [
        ([(oid, f32(1.0) - f32(d)) for oid, d in vector], f32(alpha)),
        ([(oid, f32(s)) for oid, s in keyword], f32(1.0 - alpha)),
    ]
    score: dict[str, np.float32] = {}
    last: dict[str, np.float32] = {}
    for results, weight in legs:
        if not results:
            continue
        values = [v for _, v in results]
        top, bottom = max(values), min(values)
        for oid, value in results:
            s = weight if top == bottom else f32(weight * ((value - bottom) / (top - bottom)))
            score[oid] = f32(s + score[oid]) if oid in score else s
            last[oid] = value

    def before(a: str, b: str) -> bool:
        d = float(score[b] - score[a])
        if d * d < 1e-14:
            d2 = float(last[b] - last[a])
            if d2 * d2 < 1e-14:
                return a < b
            return bool(last[a] > last[b])
        return bool(score[a] > score[b])

    def compare(a: str, b: str) -> int:
        return -1 if before(a, b) else (1 if before(b, a) else 0)

    return sorted(score, key=cmp_to_key(compare))[:limit]


async def _measure(clients: Any, settings: Any, asked: list[str]) -> dict[str, Any]:
    store, embedder = clients.store, clients.embedder
    model = getattr(embedder, "inner", embedder)  # the model itself, not the question cache
    facts = store._facts.with_tenant(_NAMESPACE)  # noqa: SLF001 - the store's own collection
    top_k, alpha, floor = settings.api.top_k, settings.api.alpha, settings.api.min_similarity
    limit = ws._first_limit(top_k, settings.store.search_overfetch, None, None)  # noqa: SLF001
    asked_n = min(limit + ws._TIE_PAST, ws.MAX_RESULTS)  # noqa: SLF001 - what the store asks
    max_distance = ws._max_distance(floor, alpha)  # noqa: SLF001
    times: dict[str, list[float]] = {}
    same = differ = 0
    differences: list[dict[str, Any]] = []
    shallow_same: dict[str, dict[str, int]] = {}

    for i, text in enumerate(asked):
        valid = question_valid_time(text, valid=None, as_of=None, now=datetime.now(UTC))
        flt = ws._and(  # noqa: SLF001
            ws._truth_filter(None, include_false=False),  # noqa: SLF001
            ws._valid_filter(valid.interval, None),  # noqa: SLF001
        )
        query = valid.search_text

        async def hybrid(vector: list[float], q: str = query, f: Any = flt) -> Any:
            return await facts.query.hybrid(
                q,
                vector=vector,
                alpha=alpha,
                query_properties=["text"],
                max_vector_distance=max_distance,
                filters=f,
                limit=asked_n,
                include_vector=True,
                return_properties=["record"],
                return_metadata=MetadataQuery(score=True),
            )

        async def keyword(
            q: str = query, f: Any = flt, depth: int = _LEG
        ) -> list[tuple[str, float]]:
            got = await facts.query.bm25(
                q,
                query_properties=["text"],
                filters=f,
                limit=depth,
                return_properties=[],
                return_metadata=MetadataQuery(score=True),
            )
            return [(str(o.uuid), float(o.metadata.score or 0.0)) for o in got.objects]

        async def dense(
            vector: list[float], f: Any = flt, depth: int = _LEG
        ) -> list[tuple[str, float]]:
            got = await facts.query.near_vector(
                vector,
                filters=f,
                limit=depth,
                return_properties=[],
                return_metadata=MetadataQuery(distance=True),
            )
            return [(str(o.uuid), float(o.metadata.distance or 0.0)) for o in got.objects]

        async def sequential(t: str = text) -> list[str]:
            vector = list(await model.embed(t))
            return [str(o.uuid) for o in (await hybrid(vector)).objects]

        async def overlap(t: str = text) -> list[str]:
            embedding = asyncio.ensure_future(model.embed(t))
            words = await keyword()
            vector = list(await embedding)
            ids = fuse(words, await dense(vector), alpha, max_distance, asked_n)
            if ids:
                await facts.query.fetch_objects(
                    filters=Filter.by_id().contains_any([uuid.UUID(x) for x in ids]),
                    limit=len(ids),
                    include_vector=True,
                    return_properties=["record"],
                )
            return ids

        vector = list(await model.embed(text))
        parts: dict[str, Callable[[], Awaitable[object]]] = {
            "sequential: embed, then one hybrid query (today)": sequential,
            "overlap: BM25 during the embedding, dense, fuse here, fetch by id": overlap,
            "the keyword leg alone (100 ids and scores)": keyword,
            "the dense leg alone (100 ids and distances)": partial(dense, vector),
            "the hybrid query alone": partial(hybrid, vector),
            "the keyword leg, 13 deep": partial(keyword, depth=asked_n),
            "the dense leg, 13 deep": partial(dense, vector, depth=asked_n),
            "the keyword leg, 30 deep": partial(keyword, depth=30),
            "the dense leg, 30 deep": partial(dense, vector, depth=30),
        }
        await kept.rotated(i, parts, times)
        theirs = [str(o.uuid) for o in (await hybrid(vector)).objects]
        words, near = await keyword(), await dense(vector)
        ours = fuse(words, near, alpha, max_distance, asked_n)
        for depth in _SHALLOWER:
            shallow = fuse(words[:depth], near[:depth], alpha, max_distance, asked_n)
            agree = shallow_same.setdefault(str(depth), {"same": 0, "same top_k set": 0})
            agree["same"] += shallow == ours
            agree["same top_k set"] += set(shallow[:top_k]) == set(ours[:top_k])
        if ours == theirs:
            same += 1
        else:
            differ += 1
            if len(differences) < 5:
                differences.append({"question": text, "hybrid": theirs, "fused": ours})
    return {
        "parts": {name: summary_ms(seconds) for name, seconds in times.items()},
        "candidates asked": asked_n,
        "fused equals hybrid (ids in order)": {"same": same, "differ": differ},
        "differences (first 5)": differences,
        "legs cut to a depth, fused here: equal to the 100-deep fusion": shallow_same,
    }


async def _run(facts: int, queries: int, out: Path, data: Path, keep: str | None) -> dict[str, Any]:
    async with kept.filled(facts, data, keep, "ask-overlap") as ready:
        started = time.perf_counter()
        result = await _measure(ready.clients, ready.settings, kept.asked(data, queries))
        ready.result["measure_s"] = round(time.perf_counter() - started, 1)
    return {**ready.result, **result}


main = kept.cli(_run, "ask-overlap", "Fill, time sequential against overlapped, write the file.")

if __name__ == "__main__":
    typer.run(main)
