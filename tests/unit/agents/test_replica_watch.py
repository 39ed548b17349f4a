"""The worker indexes again what a returning Weaviate node lost (factstream.agents.replicas)."""

from __future__ import annotations

import asyncio
from collections.abc import Collection

import pytest

from factstream.agents.replicas import Reindexing, ReplicaWatch
from factstream.errors import StoreUnavailable
from factstream.store.replicas import ReplicaRepair


class Clock:
    t = 1000.0

    def __call__(self) -> float:
        return self.t


class Store:
    """The two calls the watch makes, scripted: node health in turn, reindex recorded."""

    def __init__(self, health: list[dict[str, bool] | None], fail: int = 0) -> None:
        self.clock = Clock()
        self.replicas: ReplicaRepair | None = ReplicaRepair(10, self.clock)
        self._health, self._fail = health, fail
        self.reindexed: list[tuple[str, set[str]]] = []

    async def node_health(self) -> dict[str, bool] | None:
        return self._health.pop(0)

    async def reindex(self, namespace: str, fact_ids: Collection[str]) -> int:
        if self._fail:
            self._fail -= 1
            raise StoreUnavailable("http://weaviate", "write facts: down")
        self.reindexed.append((namespace, set(fact_ids)))
        return len(fact_ids)


UP, DOWN = {"n1": True, "n3": True}, {"n1": True, "n3": False}


async def test_the_facts_of_owned_namespaces_are_indexed_again_when_a_node_is_back() -> None:
    store = Store([UP, DOWN, UP])
    assert isinstance(store, Reindexing)

    async def owns(namespace: str) -> bool:
        return namespace != "moved"

    watch = ReplicaWatch(store, owns)
    await watch.poll()
    assert store.replicas is not None
    store.replicas.wrote("a", ["x"], began=999)
    store.replicas.wrote("moved", ["y"], began=999)
    await watch.poll()
    assert store.reindexed == []
    await watch.poll()
    assert store.reindexed == [("a", {"x"})]  # "moved" is another worker's now
    assert watch.pending == {}
    assert watch.reindexed == 1


async def test_a_failed_reindex_is_retried_at_the_next_poll() -> None:
    store = Store([UP, DOWN, UP, UP, UP], fail=1)

    async def owns(namespace: str) -> bool:
        return True

    watch = ReplicaWatch(store, owns)
    await watch.poll()
    assert store.replicas is not None
    store.replicas.wrote("a", ["x"], began=999)
    await watch.poll()
    await watch.poll()  # the node is back; the write fails
    assert watch.pending == {"a": {"x"}}
    await watch.poll()
    assert store.reindexed == [("a", {"x"})]
    assert watch.pending == {}


async def test_a_slow_reindex_gives_up_for_now_and_keeps_the_rest_pending(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import factstream.agents.replicas as replicas

    monkeypatch.setattr(replicas, "_CHUNK", 2)
    monkeypatch.setattr(replicas, "_CHUNK_TIMEOUT_S", 0.05)
    store = Store([UP, DOWN, UP, UP])
    calls = 0
    done = store.reindex

    async def slow_second(namespace: str, fact_ids: Collection[str]) -> int:
        nonlocal calls
        calls += 1
        if calls == 2:
            await asyncio.sleep(1)
        return await done(namespace, fact_ids)

    store.reindex = slow_second  # type: ignore[method-assign]

    async def owns(namespace: str) -> bool:
        return True

    watch = ReplicaWatch(store, owns)
    await watch.poll()
    assert store.replicas is not None
    store.replicas.wrote("a", ["f1", "f2", "f3", "f4"], began=999)
    await watch.poll()
    await watch.poll()  # back: the first chunk is written, the second times out
    assert store.reindexed == [("a", {"f1", "f2"})]
    assert watch.pending == {"a": {"f3", "f4"}}
    await watch.poll()
    assert store.reindexed[-1] == ("a", {"f3", "f4"})
    assert watch.pending == {}
