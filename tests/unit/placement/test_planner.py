"""The placement planner: whole namespaces spread evenly; placed ones never move."""

from __future__ import annotations

import random

import pytest

from factstream.placement.planner import Plan, plan, spread
from factstream.streams.placement import Placement, PlacementError, partition_of

PARTS = 12


def _volume(seed: int = 7, namespaces: int = 96) -> dict[str, int]:
    rng = random.Random(seed)  # noqa: S311 - a seeded workload, not a secret
    return {f"scale-{i}": rng.randint(1, 5) for i in range(namespaces)}


def test_the_plan_spreads_documents_more_evenly_than_hashing() -> None:
    volume = _volume()
    proposal = plan(volume, PARTS)
    assert proposal.before == spread(volume, Placement(), PARTS)
    assert proposal.before == [
        sum(c for n, c in volume.items() if partition_of(n, PARTS) == p) for p in range(PARTS)
    ]
    assert sum(proposal.after) == sum(volume.values())
    # Namespaces of 1 to 5 documents: the greedy rule ends within one namespace of even.
    assert max(proposal.after) - min(proposal.after) <= 5
    assert Plan.imbalance(proposal.after) < Plan.imbalance(proposal.before)
    assert set(proposal.placement.namespaces) == set(volume)
    assert proposal.placement.partitions == PARTS
    assert (proposal.kept, proposal.placed) == (0, len(volume))


def test_equal_namespaces_fill_every_partition_alike() -> None:
    proposal = plan({f"n{i}": 20 for i in range(24)}, PARTS)
    assert proposal.after == [40] * PARTS


def test_placed_namespaces_stay_and_count_in_the_load() -> None:
    volume = {"big": 100, "a": 10, "b": 10, "c": 10}
    proposal = plan(volume, 3, {"big": 1, "quiet": 2})
    mapping = proposal.placement.namespaces
    assert mapping["big"] == 1 and mapping["quiet"] == 2  # kept, even without volume
    assert mapping["a"] != 1 and mapping["b"] != 1 and mapping["c"] != 1  # away from "big"
    assert proposal.after[1] == 100
    assert (proposal.kept, proposal.placed) == (2, 3)


def test_the_plan_is_deterministic() -> None:
    volume = _volume(3)
    assert plan(volume, PARTS) == plan(dict(reversed(volume.items())), PARTS)


def test_before_follows_the_current_map() -> None:
    now = Placement({"a": 0, "b": 0}, 2)
    assert plan({"a": 3, "b": 4}, 2, now=now).before == [7, 0]


def test_a_placed_namespace_outside_the_partitions_is_refused() -> None:
    with pytest.raises(PlacementError, match="--move"):
        plan({"a": 1}, 4, {"a": 7})
    with pytest.raises(PlacementError):
        plan({"a": 1}, 0)


def test_imbalance_is_the_busiest_over_the_mean() -> None:
    assert Plan.imbalance([4, 32, 20, 24]) == 1.6
    assert Plan.imbalance([0, 0]) == 1.0
