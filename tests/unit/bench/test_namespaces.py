"""bench/namespaces.py's inputs: conversations of a few chunks, one namespace each."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime

from bench.namespaces import _chunks
from factstream.topics.records import Document, DocumentKind


def _doc(i: int) -> Document:
    return Document(
        id=f"d{i}",
        namespace="x",
        kind=DocumentKind.ARTICLE,
        timestamp=datetime(2024, 1, 1, tzinfo=UTC),
        text=f"text {i}",
    )


def test_fresh_namespaces_get_their_chunks_together_and_warm_ones_share_the_rest() -> None:
    base = [_doc(i) for i in range(12)]
    fresh = _chunks(base, "f-", [f"n{i}" for i in range(6)], 2)
    assert [d.namespace for d in fresh[:4]] == ["n0", "n0", "n1", "n1"]
    assert Counter(d.namespace for d in fresh) == {f"n{i}": 2 for i in range(6)}
    warm = _chunks(base, "w-", ["a", "b", "c"], 2)
    assert Counter(d.namespace for d in warm) == {"a": 4, "b": 4, "c": 4}
    assert len({d.id for d in fresh + warm}) == 24
    assert [d.text for d in fresh] == [d.text for d in base]
