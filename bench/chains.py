"""The busy benchmark's dependency figures (issue 18): which documents waited for an
earlier one in flight, and the throughput those waits leave.

A worker logs each wait of a document for the commit of an earlier document whose planned
edits may change its candidates (agents/dependencies.py). A document judged after the
commit of the one ``d`` before it can commit no sooner than that commit plus one LM call
(its classification); commits go in input order. The longest such chain over the stream is
a bound no window can beat: documents / (its length in seconds). Counting the commit's own
time too (one document at a time: bench/commits.py measures it) lowers that bound.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from factstream.topics.records import Document

__all__ = ["chain_seconds", "dependency_figures", "waits_in"]

_WAIT = re.compile(r"'(?P<doc>[^']+)' waits for the commit (?P<distance>\d+) before it")


def waits_in(log: str) -> dict[str, int]:
    """Per document id, the distance of the nearest earlier document it waited for."""
    nearest: dict[str, int] = {}
    for match in _WAIT.finditer(log):
        doc, distance = match["doc"], int(match["distance"])
        nearest[doc] = min(distance, nearest.get(doc, distance))
    return nearest


def chain_seconds(
    docs: Sequence[Document], waits: dict[str, int], latency_s: float, commit_s: float = 0.0
) -> float:
    """When the last document commits if each takes one LM call of ``latency_s`` after the
    commit it waited for, and each commit ``commit_s``, one after another in input order."""
    finish: list[float] = []
    for position, doc in enumerate(docs):
        distance = waits.get(doc.id)
        start = finish[position - distance] if distance and distance <= position else 0.0
        previous = finish[-1] if finish else 0.0
        finish.append(max(previous + commit_s, start + latency_s + commit_s))
    return finish[-1] if finish else 0.0


def dependency_figures(
    docs: Sequence[Document], waits: dict[str, int], window: int, latency_s: float
) -> dict[str, Any]:
    """The share of documents that waited for an earlier one (within ``window``), how far,
    and the chain bound: one LM call of ``latency_s`` after each commit waited for."""
    chain_s = chain_seconds(docs, waits, latency_s)
    counts = [waits[d.id] for d in docs if d.id in waits]
    return {
        "window": window,
        "waited": len(counts),
        "waited_share": round(len(counts) / len(docs), 4) if docs else 0.0,
        "distance_mean": round(sum(counts) / len(counts), 2) if counts else None,
        "distance_at_most": {
            str(d): sum(c <= d for c in counts) for d in (1, 2, 4, 8, 16, 32) if d < window
        },
        "chain_s": round(chain_s, 2),
        "chain_bound_docs_per_s": round(len(docs) / chain_s, 3) if chain_s else None,
    }
