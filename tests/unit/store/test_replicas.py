"""Which facts a Weaviate node that came back may have lost (factstream.store.replicas)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from factstream.store.replicas import CLUSTER, ReplicaRepair, nudged

HEALTHY = {"node1": True, "node2": True, "node3": True}


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def repair(window_s: float = 10.0) -> tuple[ReplicaRepair, Clock]:
    clock = Clock()
    return ReplicaRepair(window_s, clock), clock


def test_a_node_back_names_the_writes_of_the_window_before_it_went_down() -> None:
    r, clock = repair(10)
    assert r.observe(HEALTHY) == {}
    r.wrote("a", ["old"], began=985)  # before the window
    r.wrote("a", ["x", "y"], began=995)
    r.wrote("b", ["z"], began=999.9)
    clock.t = 1000
    assert r.observe({**HEALTHY, "node3": False}) == {}
    assert r.down == {"node3": 1000}
    r.wrote("a", ["after"], began=1001)  # the node was down: async replication brings it
    clock.t = 1030  # down for 30 s: the window's writes are kept meanwhile
    assert r.observe({**HEALTHY, "node3": False}) == {}
    clock.t = 1031
    assert r.observe(HEALTHY) == {"a": {"x", "y"}, "b": {"z"}}
    assert r.down == {}
    assert r.observe(HEALTHY) == {}  # once


def test_a_node_missing_from_the_list_counts_as_down() -> None:
    r, clock = repair(10)
    r.observe(HEALTHY)
    r.wrote("a", ["x"], began=999)
    r.observe({"node1": True, "node2": True})
    clock.t = 1005
    assert r.observe(HEALTHY) == {"a": {"x"}}


def test_a_cluster_that_cannot_be_asked_is_down_until_it_answers() -> None:
    r, clock = repair(10)
    r.wrote("a", ["x"], began=999)
    assert r.observe(None) == {}  # no node known yet: the cluster as a whole
    assert r.down == {CLUSTER: 1000}
    clock.t = 1020
    assert r.observe({"node1": True}) == {"a": {"x"}}
    r.wrote("a", ["y"], began=1021)
    clock.t = 1022
    r.observe(None)  # a single node SIGKILLed: the known node is down
    assert r.down == {"node1": 1022}
    clock.t = 1030
    assert r.observe({"node1": True}) == {"a": {"y"}}


def test_a_node_killed_after_a_look_that_could_not_ask_is_covered_until_seen_down() -> None:
    """The cluster could not be asked at 1000 (a slow node 1): every node counts as down
    from then. Node 3 is SIGKILLed at 1002 with a write in flight; a listing shows it down
    at 1003. The write of 1002 is named when it is back; one begun after 1003 is not."""
    r, clock = repair(10)
    r.observe(HEALTHY)
    r.wrote("a", ["before"], began=995)
    r.observe(None)
    r.wrote("a", ["in-flight"], began=1002)
    clock.t = 1003
    assert r.observe({**HEALTHY, "node3": False}) == {"a": {"before"}}  # nodes 1, 2 "back"
    r.wrote("a", ["while-down"], began=1005)
    clock.t = 1010
    assert r.observe({**HEALTHY, "node3": False}) == {}  # down for sure since 1003
    clock.t = 1030
    assert r.observe(HEALTHY) == {"a": {"before", "in-flight"}}
    assert r.down == {}


def test_old_writes_are_forgotten_while_every_node_is_up() -> None:
    r, clock = repair(10)
    r.observe(HEALTHY)
    r.wrote("a", ["x"], began=1000)
    clock.t = 1011
    r.wrote("a", ["y"], began=1011)
    r.observe({**HEALTHY, "node2": False})
    clock.t = 1012
    assert r.observe(HEALTHY) == {"a": {"y"}}
    assert len(r._writes) == 1  # noqa: SLF001 - "x" is gone, not only filtered


def test_the_window_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        ReplicaRepair(0)


@given(st.lists(st.floats(-1, 1, allow_nan=False, width=32), min_size=1, max_size=16))
def test_a_nudged_vector_differs_in_float32_and_by_nothing_that_matters(
    vector: list[float],
) -> None:
    moved = nudged(vector)
    assert moved[:-1] == vector[:-1]
    assert np.float32(moved[-1]) != np.float32(vector[-1])
    assert abs(moved[-1] - vector[-1]) < 1e-6
