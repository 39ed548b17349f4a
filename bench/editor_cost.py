"""Where the editor's retrieval time goes per document, as `eval update-retrieval` asks (issue 37).

    python -m bench.editor_cost [--data ../shared/data] [--limit N] [--out results/bench]

Loads the CLARK-News stream's facts into a fresh namespace as ``eval update-retrieval``
does (every fact true from its document's time), embeds the documents and the stale facts
first as it does (so the documents' vectors come from the text cache there too), then for
each scored change runs the editor's own ``ranked_candidates`` with the configured
retrieval, as of just before the document, and records per document: the seconds of its
embedding stage and of its search-and-rank stage (``timings``), Weaviate reads and texts
embedded or served from the cache (``factstream.tally``), and the CPU time of the event
loop's thread (our Python: ranking, the clients' decoding). Each document is retrieved
twice in turn: with the store's search as it is, and with candidates' vectors decoded by
the client into lists as before (``store.vector_bytes``). Writes ``<stamp>-editor-cost.json``.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import typer

from bench.corpus import DEFAULT_DATA
from bench.measure import summary_ms
from bench.report import write_named
from factstream.clients import open_clients
from factstream.config import load_settings
from factstream.edit.retrieval import Retrieval, Where, pool_depth, ranked_candidates
from factstream.store import weaviate_store as ws
from factstream.tally import Tally, counting
from factstream.temporal.intervals import ValidInterval
from factstream.text.names import document_title
from factstream_lab import provenance
from factstream_lab.eval.datasets import load_clark, verbalise
from factstream_lab.eval.retrieval import KS, load_facts, scored_changes

__all__ = ["main"]


# The store's search as it decodes candidates' vectors: float32 arrays (this tree) or the
# client's lists of Python floats (before; ``store.vector_bytes``).
_VARIANTS = ("compact vectors (this tree)", "the client's float lists (before)")


def _summary(rows: list[tuple[float, float, float, float]], tally: Tally) -> dict[str, Any]:
    n = len(rows)
    return {
        "total": summary_ms([r[0] for r in rows]),
        "embed_stage": summary_ms([r[1] for r in rows]),
        "search_and_rank_stage": summary_ms([r[2] for r in rows]),
        "loop_thread_cpu": summary_ms([r[3] for r in rows]),
        "per_document": {k: round(v / n, 3) for k, v in sorted(tally.items())},
    }


async def _run(data: Path, limit: int | None) -> dict[str, Any]:
    settings, clark = load_settings(), load_clark(data)
    how = Retrieval.from_settings(settings.editor).but("configured")
    namespace = f"editor-cost-{datetime.now(UTC):%Y%m%d%H%M%S}"
    load_before = [round(x, 2) for x in os.getloadavg()]
    rows: dict[str, list[tuple[float, float, float, float]]] = {v: [] for v in _VARIANTS}
    tallies = {v: Tally() for v in _VARIANTS}
    async with open_clients(settings) as clients:
        store, embedder = clients.store, clients.embedder
        try:
            facts = await load_facts(store, embedder, clark, namespace)
            changes = scored_changes(clark)[:limit]
            await embedder.embed_batch([clark.documents[c.new.document_id].text for c in changes])
            await embedder.embed_batch([verbalise(c.stale) for c in changes])
            for i, change in enumerate(changes):
                doc = clark.documents[change.new.document_id]
                as_of = doc.stream_time - timedelta(microseconds=1)
                where = Where(namespace, as_of, ValidInterval(as_of, None))
                for variant in _VARIANTS[i % 2 :] + _VARIANTS[: i % 2]:
                    plain = variant != _VARIANTS[0]
                    timings: dict[str, float] = {}
                    started, cpu = time.perf_counter(), time.thread_time()
                    with counting(tallies[variant]), _vectors(plain=plain):
                        await ranked_candidates(
                            store,
                            embedder,
                            where,
                            doc.text,
                            how,
                            depth=max(max(KS), pool_depth(how)),
                            timings=timings,
                            title=document_title(doc.title, doc.source),
                        )
                    total, cpu = time.perf_counter() - started, time.thread_time() - cpu
                    stages = (timings.get("embed", 0.0), timings.get("retrieve", 0.0))
                    rows[variant].append((total, *stages, cpu))
        finally:
            await store.drop_namespace(namespace)
    return {
        "timestamp": datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ"),
        "commit": provenance.commit(),
        "facts": facts,
        "documents": len(rows[_VARIANTS[0]]),
        "load_avg_before": load_before,
        "load_avg_after": [round(x, 2) for x in os.getloadavg()],
        "retrieval": how.name,
        "variants": {v: _summary(rows[v], tallies[v]) for v in _VARIANTS},
    }


@contextmanager
def _vectors(*, plain: bool) -> Iterator[None]:
    """With ``plain``, the store's search leaves the client's decoding alone (as before)."""
    if not plain:
        yield
        return
    names = vars(ws)  # the store module's globals: its search looks the name up there
    real = names["compact_vectors"]
    names["compact_vectors"] = nullcontext
    try:
        yield
    finally:
        names["compact_vectors"] = real


def main(
    data: Path = DEFAULT_DATA,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N changes.")] = None,
    out: Path = Path("results/bench"),
) -> None:
    """Measure the editor's retrieval per document, write the results file."""
    result = asyncio.run(_run(data, limit))
    write_named(result, out, "editor-cost")


if __name__ == "__main__":
    typer.run(main)
