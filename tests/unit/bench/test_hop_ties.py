"""The hop searches' tie summary: reads, candidates, and the tie at the cut of re-reads."""

from __future__ import annotations

from bench.hop_ties import summary


def test_a_search_read_again_counts_the_tie_at_its_first_reads_cut() -> None:
    once = [[0.9, 0.8, 0.7]]
    twice = [[0.9, 0.5, 0.5, 0.5], [0.9, 0.8, 0.6, 0.5, 0.5, 0.5, 0.5, 0.5]]
    found = summary([once, twice], top_k=2)
    assert found["searches"] == 2 and found["reads_per_search"] == 1.5
    assert found["candidates_per_search"] == (3 + 4 + 8) / 2
    assert found["searches_by_reads"] == {1: 1, 2: 1}
    assert found["read_again_first_read_tied_at_cut"] == [3]
