"""The 2-hop asks' searches and the ties at their cut (issue 37), on a kept namespace.

    python -m bench.hop_ties --keep PREFIX [--facts 100000] [--queries 200] [--chain COMMIT]

Asks the ask benchmark's 2-hop questions (``bench.ask.hop_questions``) through
``QueryEngine.gather`` in mode multi_hop and records, per store search, the Weaviate reads
it sent and the scores each read returned: a search reads again when the candidates tied
with its last kept one run to the end of what it read (ties are cut by fact id). Run it
with ``FACTSTREAM_STORE_BM25_B`` set to compare BM25 ``b`` values on the same facts (the
store sets the collection's ``b`` when it opens); ``--chain`` runs a commit's
``chain.hop_facts`` (read by ``git show``) instead of this tree's. Writes
``<stamp>-hop-ties.json``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer

from bench import kept
from bench.ask import _engine
from bench.ask_search_ab import _hop_asked, _hop_facts_at
from bench.corpus import DEFAULT_DATA
from factstream.ask import multihop
from factstream.ask.chain import HOP_DEPTH
from factstream.ask.query import AskRequest
from factstream_lab import provenance

__all__ = ["main", "summary"]


def summary(searches: list[list[list[float]]], top_k: int) -> dict[str, Any]:
    """Per search its reads' scores: reads and candidates a search, searches by reads, and
    of those read again, the first read's candidates tied with its ``top_k``-th."""
    again = [s for s in searches if len(s) > 1]
    tied = [sum(x == s[0][top_k - 1] for x in s[0]) for s in again if len(s[0]) >= top_k]
    return {
        "searches": len(searches),
        "reads_per_search": round(sum(map(len, searches)) / len(searches), 3),
        "candidates_per_search": round(sum(len(r) for s in searches for r in s) / len(searches), 2),
        "searches_by_reads": dict(sorted(Counter(map(len, searches)).items())),
        "read_again_first_read_tied_at_cut": tied,
    }


async def _measure(
    clients: Any, settings: Any, asked: list[str], chain: str | None
) -> dict[str, Any]:
    if chain is not None:
        vars(multihop)["hop_facts"] = _hop_facts_at(chain)
    store = clients.store
    engine = _engine(clients, settings)
    inner, search = store._objects, store.search  # noqa: SLF001
    reads: list[list[float]] = []
    searches: list[list[list[float]]] = []

    async def counted(*args: Any, **kwargs: Any) -> Any:
        found = await inner(*args, **kwargs)
        reads.append([float(o.metadata.score or 0.0) for o in found])
        return found

    async def searched(*args: Any, **kwargs: Any) -> Any:
        start = len(reads)
        hits = await search(*args, **kwargs)
        searches.append(reads[start:])
        return hits

    store._objects, store.search = counted, searched  # noqa: SLF001
    for question in asked:
        await engine.gather(AskRequest(question, kept.NAMESPACE, mode="multi_hop"), {})
    bm25 = settings.store.bm25_b
    return {"bm25_b": bm25, "chain": chain or "this tree", **summary(searches, HOP_DEPTH)}


def main(
    facts: int = 100_000,
    queries: int = 200,
    out: Path = Path("results/bench"),
    data: Path = DEFAULT_DATA,
    keep: kept.Keep = None,
    chain: Annotated[str | None, typer.Option(help="A commit whose hop_facts to run.")] = None,
) -> None:
    """Fill (or reuse ``--keep``), ask the 2-hop questions, write the results file."""

    async def run(
        facts: int, queries: int, _out: Path, data: Path, keep: str | None
    ) -> dict[str, Any]:
        async with kept.filled(facts, data, keep, "hop-ties") as ready:
            asked = _hop_asked(data, facts, queries + kept.WARM_UP)
            found = await _measure(ready.clients, ready.settings, asked, chain)
        return {**ready.result, "commit": provenance.commit(), "hops": found}

    kept.cli(run, "hop-ties", "")(facts, queries, out, data, keep)


if __name__ == "__main__":
    typer.run(main)
