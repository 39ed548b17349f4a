"""The worker's per-partition gauges: lag and facts per namespace, only for owned partitions."""

from __future__ import annotations

import asyncio

from aiokafka.partitioner import DefaultPartitioner
from prometheus_client import CollectorRegistry
from unit.store.builders import make_fact, stored

from factstream.agents.editor import InputRecord, Outcome
from factstream.agents.gauges import PartitionGauges, partition_of
from factstream.agents.series import NamespaceSeries
from factstream.agents.worker import Runtime
from factstream.clients import Clients
from factstream.config import Settings
from factstream.embed.fake import HashingEmbedder
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.metrics import Metrics
from factstream.store.base import FactCounts
from factstream.store.memory import InMemoryFactStore
from factstream.streams.placement import Placement
from factstream.topics.records import InputRef

TOPIC = "factstream.documents"


def _samples(registry: CollectorRegistry, name: str) -> dict[tuple[str, ...], float]:
    return {
        tuple(v for _, v in sorted(s.labels.items())): s.value
        for family in registry.collect()
        for s in family.samples
        if s.name == name
    }


def _namespaces_in(partition: int, total: int, count: int) -> list[str]:
    found = [f"desk-{i}" for i in range(1000) if partition_of(f"desk-{i}", total) == partition]
    return found[:count]


def test_partition_of_is_where_the_producer_puts_the_key() -> None:
    partitioner = DefaultPartitioner()
    for total in (1, 4, 8, 12):
        parts = list(range(total))
        for ns in ("desk", "a", "news-desk", "ünï", *(f"n{i}" for i in range(50))):
            assert partition_of(ns, total) == partitioner(ns.encode(), parts, parts)


async def test_facts_are_counted_for_owned_partitions_and_dropped_on_revoke() -> None:
    metrics = Metrics.create()
    mine, theirs = _namespaces_in(1, 4, 1)[0], _namespaces_in(2, 4, 1)[0]
    series = NamespaceSeries(metrics.worker, [mine, theirs], 0)
    gauges = PartitionGauges(metrics.worker, TOPIC, series=series)
    store = InMemoryFactStore()
    for ns in (mine, theirs):
        await store.upsert(
            ns,
            [
                stored(make_fact("f1", namespace=ns)),
                stored(make_fact("f2", namespace=ns, changes=[(0, True), (3, False)])),
                stored(make_fact("f3", namespace=ns)),
            ],
        )
    gauges.assign({1})
    await gauges.count_partitions(store, {1}, 4)
    assert _samples(metrics.registry, "factstream_facts") == {
        (mine, "true"): 2,
        (mine, "false"): 1,
    }
    # A batch applied later in the namespace moves the gauge.
    await store.upsert(mine, [stored(make_fact("f1", namespace=mine, changes=[(0, False)]))])
    await gauges.count(store, mine, 1)
    assert _samples(metrics.registry, "factstream_facts")[(mine, "false")] == 2
    # A namespace of a partition not owned here is never exported.
    await gauges.count(store, theirs, 2)
    assert (theirs, "true") not in _samples(metrics.registry, "factstream_facts")
    gauges.revoke({1})
    assert _samples(metrics.registry, "factstream_facts") == {}


def test_lag_follows_processing_and_the_broker_and_goes_with_the_partition() -> None:
    metrics = Metrics.create()
    gauges = PartitionGauges(metrics.worker, TOPIC)
    gauges.assign({0, 3})
    gauges.processed(0, 9, highwater=10)
    assert _samples(metrics.registry, "factstream_consumer_lag") == {("0", TOPIC): 0}
    # Stuck on offset 10 while 25 more arrive: the broker's end offset shows it.
    gauges.processed(0, 10, highwater=None)
    gauges.refresh_lag({0: 36, 3: 50})
    assert _samples(metrics.registry, "factstream_consumer_lag") == {("0", TOPIC): 25}
    gauges.revoke({0})
    gauges.refresh_lag({0: 40})
    assert _samples(metrics.registry, "factstream_consumer_lag") == {}


async def test_a_mapped_namespace_is_counted_with_its_mapped_partition() -> None:
    metrics = Metrics.create()
    moved = _namespaces_in(2, 4, 1)[0]  # hashed to 2, mapped to 1
    series = NamespaceSeries(metrics.worker, [moved], 0)
    gauges = PartitionGauges(metrics.worker, TOPIC, Placement({moved: 1}, 4), series)
    store = InMemoryFactStore()
    await store.upsert(moved, [stored(make_fact("f1", namespace=moved))])
    gauges.assign({1})
    await gauges.count_partitions(store, {1}, 4)
    assert _samples(metrics.registry, "factstream_facts") == {
        (moved, "true"): 1,
        (moved, "false"): 0,
    }
    gauges.revoke({1})
    assert _samples(metrics.registry, "factstream_facts") == {}


class SlowCount(InMemoryFactStore):
    """Its fact counts wait until ``done`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.done, self.counts = asyncio.Event(), 0

    async def count_facts(self, namespace: str) -> FactCounts:
        self.counts += 1
        await self.done.wait()
        return await super().count_facts(namespace)


async def test_a_commit_does_not_wait_for_the_facts_count_and_the_gauge_follows() -> None:
    """Issue 18: the count of a namespace's facts after a commit runs beside the next
    commits (one at a time per namespace, and once more after batches applied meanwhile)."""
    metrics, store, lm = Metrics.create(), SlowCount(), ScriptedLM([])
    runtime = Runtime(Settings())
    runtime._clients = Clients(metrics, store, HashingEmbedder(), lm, TaskRunner(lm))
    series = NamespaceSeries(metrics.worker, ["desk"], 0)
    runtime._gauges = PartitionGauges(metrics.worker, TOPIC, series=series)
    runtime._gauges.assign({0})
    await store.upsert("desk", [stored(make_fact("f1", namespace="desk"))])

    def record(offset: int) -> InputRecord:
        return InputRecord(b"desk", b"{}", InputRef(topic=TOPIC, partition=0, offset=offset), 0)

    for offset in range(3):  # one at a time, the first would wait for its count
        await asyncio.wait_for(runtime.book.processed(record(offset), Outcome.APPLIED, None), 1.0)
    assert store.counts == 1
    await store.upsert("desk", [stored(make_fact("f2", namespace="desk"))])
    store.done.set()
    while runtime.book._tasks:
        await asyncio.sleep(0.01)
    assert store.counts == 2  # the batches applied while it counted: counted once more
    assert _samples(metrics.registry, "factstream_facts")[("desk", "true")] == 2


class Unlisted(InMemoryFactStore):
    """Refuses to list its namespaces: a store of 100,000 tenants must not be listed."""

    async def namespaces(self) -> list[str]:
        raise AssertionError("the gauges listed every namespace of the store")


async def test_assignment_counts_the_opt_in_namespaces_only_never_listing_the_store() -> None:
    metrics = Metrics.create()
    chosen, other = _namespaces_in(1, 4, 2)
    series = NamespaceSeries(metrics.worker, [chosen], 0)
    gauges = PartitionGauges(metrics.worker, TOPIC, series=series)
    store = Unlisted()
    for ns in (chosen, other):
        await store.upsert(ns, [stored(make_fact("f1", namespace=ns))])
    gauges.assign({1})
    await gauges.count_partitions(store, {1}, 4)
    await gauges.count(store, other, 1)  # no series of its own: not counted, not exported
    assert _samples(metrics.registry, "factstream_facts") == {
        (chosen, "true"): 1,
        (chosen, "false"): 0,
    }
