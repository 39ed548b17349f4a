"""Calibrate the retrieval similarity floor for an embedding model on CLARK-News triples.

For every (subject, relation) whose object changes, the stale fact ("subject relation
old object.") is paired with the text of the document that states the newer object: the
editor must retrieve that fact for that document. Unrelated pairs (the stale fact against
documents about other subjects) show what a floor lets through that it need not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from factstream.embed.base import Embedder
from factstream_lab.eval.datasets import load_clark, verbalise

__all__ = ["DEFAULT_FLOORS", "FloorReport", "SupersededPair", "calibrate_floor", "superseded_pairs"]

DEFAULT_FLOORS = (0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7)


@dataclass(frozen=True)
class SupersededPair:
    subject: str
    stale_fact: str
    document_text: str


@dataclass(frozen=True)
class FloorReport:
    """Share of stale facts (and of unrelated pairs) at or above each floor."""

    pairs: int
    unrelated_pairs: int
    rows: list[tuple[float, float, float]]  # (floor, stale kept, unrelated kept)
    stale_quantiles: dict[str, float]


def superseded_pairs(data_dir: Path) -> list[SupersededPair]:
    """Each change of an object, as (stale fact, text of the document stating the new one)."""
    clark = load_clark(data_dir)
    return [
        SupersededPair(c.stale.subject, verbalise(c.stale), clark.documents[c.new.document_id].text)
        for c in clark.changes()
    ]


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def _share(values: Sequence[float], floor: float) -> float:
    return sum(v >= floor for v in values) / len(values) if values else 0.0


async def calibrate_floor(
    embedder: Embedder, data_dir: Path, floors: Sequence[float] = DEFAULT_FLOORS
) -> FloorReport:
    """Cosine similarities of stale facts to their superseding documents, against floors."""
    pairs = superseded_pairs(data_dir)
    facts = await embedder.embed_batch([p.stale_fact for p in pairs])
    texts = await embedder.embed_batch([p.document_text for p in pairs])
    stale = [_dot(f, t) for f, t in zip(facts, texts, strict=True)]
    unrelated = [
        _dot(facts[i], texts[j])
        for i in range(len(pairs))
        for j in range(len(pairs))
        if pairs[i].subject != pairs[j].subject
    ]
    ordered = sorted(stale)
    quantiles = (
        {
            f"p{int(q * 100):02d}": ordered[int(q * (len(ordered) - 1))]
            for q in (0.05, 0.1, 0.25, 0.5)
        }
        if ordered
        else {}
    )
    rows = [(f, _share(stale, f), _share(unrelated, f)) for f in floors]
    return FloorReport(len(pairs), len(unrelated), rows, quantiles)
