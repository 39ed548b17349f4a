"""The client-side copy of Weaviate's relative score fusion (bench.ask_overlap.fuse)."""

from __future__ import annotations

from bench.ask_overlap import fuse


def test_each_leg_is_min_max_normalised_and_weighted() -> None:
    # vector: a best (distance 0.1 -> 1.0), b worst (0.5 -> 0.0); keyword: b best, a worst.
    vector = [("a", 0.1), ("c", 0.3), ("b", 0.5)]
    keyword = [("b", 9.0), ("c", 5.0), ("a", 1.0)]
    # alpha 0.75: a 0.75, c 0.375 + 0.125, b 0.25
    assert fuse(keyword, vector, 0.75, None, 10) == ["a", "c", "b"]
    # alpha 0.25: b 0.75, c 0.125 + 0.375, a 0.25
    assert fuse(keyword, vector, 0.25, None, 10) == ["b", "c", "a"]
    assert fuse(keyword, vector, 0.25, None, 2) == ["b", "c"]


def test_the_distance_cut_drops_keyword_hits_outside_the_vector_leg() -> None:
    vector = [("a", 0.1), ("b", 0.2), ("c", 0.9)]
    keyword = [("c", 9.0), ("d", 8.0), ("a", 1.0)]
    assert fuse(keyword, vector, 0.5, 0.5, 10) == ["a", "b"]
    assert set(fuse(keyword, vector, 0.5, None, 10)) == {"a", "b", "c", "d"}


def test_a_leg_of_equal_scores_gives_each_the_whole_weight() -> None:
    assert fuse([("a", 2.0), ("b", 2.0)], [], 0.5, None, 10) == ["a", "b"]


def test_equal_fused_scores_fall_to_the_last_legs_raw_score_then_the_id() -> None:
    # Both only in the keyword leg with the same raw score: by id.
    assert fuse([("b", 3.0), ("a", 3.0), ("z", 1.0)], [], 0.5, None, 2) == ["a", "b"]
    # Equal fused score (0.5 each), the last leg's raw score differs: the higher first.
    vector = [("x", 0.1), ("y", 0.3)]  # x 1.0, y 0.0
    keyword = [("y", 7.0), ("x", 2.0)]  # y 1.0, x 0.0
    assert fuse(keyword, vector, 0.5, None, 10) == ["y", "x"]
