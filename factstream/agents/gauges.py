"""The worker's per-partition gauges: consumer lag, and facts true/false per namespace.

A gauge about a partition is exported only by the worker that owns the partition now:
assignment counts it, revocation removes its labels. So summing over the workers never counts
a partition twice, and a worker that lost a partition leaves no stale value behind.

Facts are exported only for the namespaces with series of their own (agents/series.py: an
opt-in list and the busiest), so the series do not grow with the namespaces. They are
counted from the store, so the gauge is right after a restart and after a rebuild: on
assignment for every opt-in namespace whose partition the worker gained (namespaces are keys
of the documents topic, placed by the placement map, else by Kafka's default murmur2
partitioner: factstream.streams.placement), and after every batch the worker applies, for
that batch's namespace if it has series. Nothing here lists the store's namespaces: with a
hundred thousand tenants, most of them inactive, that would cost a read of each.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection, Mapping

from factstream.agents.editor import InputRecord, Outcome
from factstream.agents.series import NamespaceSeries
from factstream.config import KafkaSettings
from factstream.metrics import WorkerMetrics
from factstream.resilience import backoff_delay
from factstream.store.base import FactStore
from factstream.streams.admin import topic_partitions
from factstream.streams.placement import Placement, partition_of
from factstream.topics.definitions import TopicName, topic_name

__all__ = ["GaugeBook", "PartitionGauges", "partition_of"]

log = logging.getLogger(__name__)


class PartitionGauges:
    """Lag per documents partition and facts per namespace with series, for the partitions
    owned here."""

    def __init__(
        self,
        metrics: WorkerMetrics,
        documents_topic: str,
        placement: Placement | None = None,
        series: NamespaceSeries | None = None,
    ) -> None:
        self._metrics, self._topic = metrics, documents_topic
        self._placement = placement or Placement()
        self.series = series or NamespaceSeries(metrics, (), 0)
        self._owned: set[int] = set()
        self._processed: dict[int, int] = {}  # partition -> last processed offset

    @property
    def owned(self) -> frozenset[int]:
        """The documents partitions this worker owns."""
        return frozenset(self._owned)

    def owns(self, namespace: str, total: int) -> bool:
        """Whether the namespace's partition (of ``total``) is one this worker owns."""
        return self._placement.partition(namespace, total) in self._owned

    def assign(self, partitions: Collection[int]) -> None:
        """Partitions gained (counting their facts is :meth:`count_partitions`)."""
        self._owned |= set(partitions)

    def revoke(self, partitions: Collection[int]) -> None:
        """Partitions lost: their lag and their namespaces' facts are no longer ours to say."""
        lost = set(partitions)
        self._owned -= lost
        for partition in lost:
            if self._processed.pop(partition, None) is not None:
                self._metrics.lag.remove(self._topic, str(partition))
        self.series.revoke(lost)

    def processed(self, partition: int, offset: int, highwater: int | None) -> None:
        """A record of the partition was processed; ``highwater`` is the next offset to write."""
        self._processed[partition] = offset
        if highwater is not None:
            self._set_lag(partition, highwater)

    def refresh_lag(self, highwaters: Mapping[int, int]) -> None:
        """Lag from the broker's end offsets, so it grows while processing is stuck too.

        Only partitions processed since they were assigned: before the first record the
        worker does not know where it stands.
        """
        for partition, highwater in highwaters.items():
            if partition in self._owned and partition in self._processed:
                self._set_lag(partition, highwater)

    async def count_partitions(
        self, store: FactStore, partitions: Collection[int], total: int
    ) -> None:
        """Count the facts of every namespace with series placed in ``partitions`` (of
        ``total``)."""
        wanted = set(partitions)
        for namespace in sorted(self.series.exported_now()):
            partition = self._placement.partition(namespace, total)
            if partition in wanted:
                await self.count(store, namespace, partition)

    async def count(self, store: FactStore, namespace: str, partition: int) -> None:
        """Set the namespace's facts gauge from the store, if it has series and its
        partition is still ours."""
        if not self.series.exported(namespace):
            return
        counts = await store.count_facts(namespace)
        if partition not in self._owned:
            return
        self.series.set_facts(namespace, partition, counts)

    def _set_lag(self, partition: int, highwater: int) -> None:
        lag = max(0, highwater - self._processed[partition] - 1)
        self._metrics.lag.labels(topic=self._topic, partition=str(partition)).set(lag)


class GaugeBook:
    """The worker's bookkeeping behind the gauges: which partitions it owns, and the facts
    counts it runs in the background, so that ``worker.py`` only wires them.

    Assignment and revocation never wait (they run inside a rebalance), and may come before
    the gauges exist (the clients are built on the first document): partitions given early
    are handed over by :meth:`attach`. Counting a namespace's facts after a batch never holds
    the next commit (issue 18): one count of a namespace at a time, and one more after it when
    a batch was applied while it ran.
    """

    def __init__(
        self,
        kafka: KafkaSettings,
        built: Callable[[], Awaitable[tuple[PartitionGauges, FactStore]]],
    ) -> None:
        self._kafka = kafka
        self._built = built  # builds the clients on first use
        self._gauges: PartitionGauges | None = None
        self._assigned_early: set[int] = set()  # partitions given before the gauges exist
        self._tasks: set[asyncio.Task[None]] = set()
        self._counting: dict[str, bool] = {}  # namespace -> counted again after this count

    def attach(self, gauges: PartitionGauges) -> None:
        """The gauges exist now: they own the partitions assigned before."""
        self._gauges = gauges
        gauges.assign(self._assigned_early)

    def assign(self, partitions: set[int]) -> None:
        """Documents partitions gained: own them now, count their facts in the background."""
        if self._gauges is not None:
            self._gauges.assign(partitions)
        else:
            self._assigned_early |= partitions
        self._spawn(self._count_partitions(partitions))

    def revoke(self, partitions: set[int]) -> None:
        """Documents partitions lost: their gauges go."""
        self._assigned_early -= partitions
        if self._gauges is not None:
            self._gauges.revoke(partitions)

    async def processed(self, record: InputRecord, outcome: Outcome, highwater: int | None) -> None:
        """Update the gauges after a record; a namespace with series whose facts changed (or
        may have) is counted again in the background."""
        gauges, _ = await self._built()
        gauges.processed(record.source.partition, record.source.offset, highwater)
        changed = outcome in (Outcome.APPLIED, Outcome.RECOVERED)
        if changed and record.key is not None:
            namespace = record.key.decode()
            if gauges.series.exported(namespace):
                self._recount(namespace, record.source.partition)

    def cancel(self) -> None:
        """Stop the counts under way (the worker is closing)."""
        for task in list(self._tasks):
            task.cancel()

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _recount(self, namespace: str, partition: int) -> None:
        if namespace in self._counting:
            self._counting[namespace] = True
            return
        self._counting[namespace] = False
        self._spawn(self._count_facts(namespace, partition))

    async def _count_facts(self, namespace: str, partition: int) -> None:
        try:
            while True:
                self._counting[namespace] = False
                try:
                    gauges, store = await self._built()
                    await gauges.count(store, namespace, partition)
                except Exception as exc:  # noqa: BLE001 - a gauge must not stop the editing
                    log.warning("facts gauge not updated: %r", exc)
                if not self._counting[namespace]:
                    return
        finally:
            del self._counting[namespace]

    async def _count_partitions(self, partitions: set[int]) -> None:
        # Retried until it succeeds or the partitions are gone: a Weaviate outage at
        # assignment must not leave the gauge missing until the namespace's next document.
        topic = topic_name(TopicName.DOCUMENTS, self._kafka.topic_prefix)
        attempt = 0
        while True:
            gauges, store = await self._built()
            if not partitions & gauges.owned:
                return
            try:
                total = len(await topic_partitions(self._kafka, topic))
                await gauges.count_partitions(store, partitions, total)
                return
            except Exception as exc:  # noqa: BLE001 - retried; the worker goes on meanwhile
                attempt += 1
                delay = backoff_delay(attempt, 1.0, 60.0)
                log.warning("facts not counted: %r; retrying in %.0fs", exc, delay)
                await asyncio.sleep(delay)
