"""The shared store rules: cosine, visibility at a time, listing order, argument checks."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from unit.store.builders import day, make_fact, stored

from factstream.errors import StoreError
from factstream.store.rules import (
    check_namespace,
    check_search_args,
    cosine,
    odd_dimensions,
    order_key,
    similarities,
    similarity,
    visible,
)


def test_cosine_ignores_length_and_handles_zero_vectors() -> None:
    assert cosine([3.0, 0.0], [0.5, 0.5]) == pytest.approx(math.sqrt(0.5))
    assert cosine([1.0, 2.0], [-2.0, -4.0]) == pytest.approx(-1.0)
    assert cosine([0.0, 0.0], [1.0, 0.0]) == 0.0
    with pytest.raises(ValueError, match="different dimensions"):
        cosine([1.0], [1.0, 0.0])
    with pytest.raises(StoreError, match="does not fit"):
        similarity([1.0], [1.0, 0.0])


_FLOATS = st.floats(-1e3, 1e3, allow_nan=False)


@given(
    st.integers(1, 8).flatmap(
        lambda d: st.tuples(
            st.lists(_FLOATS, min_size=d, max_size=d),
            st.lists(st.lists(_FLOATS, min_size=d, max_size=d), max_size=6),
        )
    )
)
def test_similarities_are_the_cosines_one_by_one(
    case: tuple[list[float], list[list[float]]],
) -> None:
    query, stored = case
    assert similarities(query, stored) == pytest.approx(
        [similarity(query, v) for v in stored], abs=1e-9
    )


def test_similarities_refuse_vectors_of_another_dimension() -> None:
    with pytest.raises(StoreError, match="does not fit"):
        similarities([1.0, 0.0], [[1.0, 0.0, 0.0]])
    with pytest.raises(StoreError, match="different dimensions"):
        similarities([1.0, 0.0], [[1.0, 0.0], [1.0]])


def test_visible_follows_the_last_entry_at_or_before_the_time() -> None:
    fact = make_fact("f", changes=[(0, True), (5, False), (10, True)])
    assert [visible(fact, day(d)) for d in (-1, 0, 4, 5, 9, 10)] == [
        False,
        True,
        True,
        False,
        False,
        True,
    ]
    assert visible(fact, None)
    assert visible(fact, day(5), include_false=True)
    assert not visible(fact, day(-1), include_false=True)
    assert visible(make_fact("g", changes=[(0, True), (1, False)]), None, include_false=True)


def test_order_key_sorts_ids_by_their_bytes() -> None:
    ids = ["b", "B", "a b", "é", "c-1", "c", "ab"]
    assert sorted(ids, key=order_key) == sorted(ids, key=str.encode)
    # Hex keys compare the same way with or without case folding.
    keys = [order_key(i) for i in ids]
    assert sorted(keys) == sorted(keys, key=str.lower)


@pytest.mark.parametrize(
    ("top_k", "min_similarity", "alpha"), [(0, 0.7, 0.5), (3, 1.5, 0.5), (3, 0.7, -0.1)]
)
def test_search_arguments_are_checked(top_k: int, min_similarity: float, alpha: float) -> None:
    with pytest.raises(ValueError):
        check_search_args(top_k, min_similarity, alpha)


def test_mixed_dimensions_name_the_odd_facts() -> None:
    facts = [stored(make_fact(f"f{i}")) for i in range(3)]
    assert odd_dimensions(facts) == {}
    odd = odd_dimensions([stored(make_fact("odd"), [1.0]), *facts])
    assert list(odd) == ["odd"]


def test_a_fact_of_another_namespace_is_refused() -> None:
    with pytest.raises(ValueError, match="belongs to namespace desk-b"):
        check_namespace("desk-a", [stored(make_fact("f", namespace="desk-b"))])
