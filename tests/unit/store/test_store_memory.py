"""What only the in-memory double promises (the shared contract is tests/integration)."""

from __future__ import annotations

import pytest
from unit.store.builders import make_fact, stored

from factstream.store.memory import InMemoryFactStore


async def test_the_hybrid_score_blends_cosine_and_term_overlap() -> None:
    store = InMemoryFactStore()
    await store.upsert(
        "desk-a",
        [
            stored(make_fact("both", "red apple"), [1.0, 0.0, 0.0]),
            stored(make_fact("word", "red car"), [0.0, 1.0, 0.0]),
        ],
    )
    hits = await store.search(
        "desk-a", "red apple", [1.0, 0.0, 0.0], as_of=None, top_k=5, min_similarity=-1, alpha=0.5
    )
    assert [(h.fact.fact_id, h.score) for h in hits] == [
        ("both", pytest.approx(0.5 * 1.0 + 0.5 * 1.0)),
        ("word", pytest.approx(0.5 * 0.5 + 0.5 * 0.5)),
    ]


async def test_namespaces_are_those_written_and_not_dropped() -> None:
    store = InMemoryFactStore()
    await store.upsert("desk-b", [stored(make_fact("f", namespace="desk-b"))])
    await store.upsert("desk-a", [stored(make_fact("f"))])
    await store.drop_namespace("desk-b")
    assert await store.namespaces() == ["desk-a"]
    await store.close()
