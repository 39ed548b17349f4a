"""Pool routing and the in-process hybrid ranking of pooled namespaces (store/pools.py)."""

from __future__ import annotations

import pytest

from factstream.store.pools import hybrid_ranked, is_pool, pool_of, words
from factstream.topics.records import NAMESPACE_PATTERN


def test_a_namespace_always_gets_the_same_pool() -> None:
    names = [f"user-{i}" for i in range(2000)]
    first = [pool_of(n, 16) for n in names]
    assert first == [pool_of(n, 16) for n in names]
    assert pool_of("user-7", 16) == "_pool-00009"  # fixed across processes and versions
    counts = {p: first.count(p) for p in set(first)}
    assert len(counts) == 16 and min(counts.values()) > 2000 / 16 / 2
    assert all(is_pool(p) for p in first)
    with pytest.raises(ValueError, match="at least 1"):
        pool_of("x", 0)


def test_no_namespace_name_is_a_pool_name() -> None:
    import re

    assert re.match(NAMESPACE_PATTERN, pool_of("a", 3)) is None
    assert not is_pool("desk-a")


def test_words_are_weaviates_word_tokens() -> None:
    assert words("Mayor's plan: 2024-budget, Zürich_vote!") == [
        "mayor", "s", "plan", "2024", "budget", "zürich", "vote",
    ]  # fmt: skip


def test_keyword_scores_use_the_given_corpus_statistics() -> None:
    texts = ["budget vote", "budget", "river"]
    ranked = hybrid_ranked(
        texts, [0.0, 0.0, 0.0], [0, 1, 2], "the budget vote",
        alpha=0.0, max_distance=None, limit=10, k1=1.2, b=0.0,
    )  # fmt: skip
    assert [r.index for r in ranked] == [0, 1]
    assert [r.score for r in ranked] == [1.0, 0.0]


def test_fusion_normalises_each_side_and_weights_it() -> None:
    texts = ["a storm", "storm storm", "calm"]
    cosines = [0.9, 0.1, 0.5]
    ranked = hybrid_ranked(
        texts, cosines, [0, 1, 2], "storm",
        alpha=0.5, max_distance=None, limit=10, k1=1.2, b=0.0,
    )  # fmt: skip
    by = {r.index: r.score for r in ranked}
    # Vector side: 0.9 -> 1, 0.5 -> 0.5, 0.1 -> 0. Keyword: "storm storm" 1, "a storm" 0.
    assert by[0] == pytest.approx(0.5 * 1 + 0.5 * 0)
    assert by[1] == pytest.approx(0.5 * 0 + 0.5 * 1)
    assert by[2] == pytest.approx(0.5 * 0.5)
    # A distance cut keeps the far one off the vector side; alone, a side's score is 1.
    cut = hybrid_ranked(
        texts, cosines, [0, 1, 2], "",
        alpha=1.0, max_distance=0.2, limit=10, k1=1.2, b=0.0,
    )  # fmt: skip
    assert [(r.index, r.score) for r in cut] == [(0, 1.0)]


def test_a_distance_cut_keeps_only_the_vector_sides_keyword_hits() -> None:
    texts = ["storm", "storm storm storm", "a storm and rain"]
    cosines = [0.9, 0.1, 0.8]
    ranked = hybrid_ranked(
        texts, cosines, [0, 1, 2], "storm",
        alpha=0.5, max_distance=0.5, limit=10, k1=1.2, b=0.0,
    )  # fmt: skip
    by = {r.index: r.score for r in ranked}
    # "storm storm storm" is outside the cut: not on the vector side, so not on the
    # keyword side either, and its BM25 score does not set the keyword side's top (with
    # it, the two left would score 0 there). With ``b`` 0 the two left tie on BM25: each 1.
    assert set(by) == {0, 2}
    assert by[0] == pytest.approx(0.5 * 1 + 0.5 * 1)
    assert by[2] == pytest.approx(0.5 * 0 + 0.5 * 1)
