"""When the worker's idle sweep lists every tenant (agents/lifecycle.py ``Listing``)."""

from __future__ import annotations

from factstream.agents.lifecycle import Listing


def test_a_sweep_lists_first_on_a_change_of_partitions_and_every_few() -> None:
    listing = Listing(every=3)
    owned = frozenset({0, 1})
    assert [listing.due(owned) for _ in range(7)] == [True, False, False, True, False, False, True]
    assert listing.due(frozenset({0})) is True  # a rebalance: other namespaces are ours now
    assert listing.due(frozenset({0})) is False
    listing.failed()
    assert listing.due(frozenset({0})) is True
