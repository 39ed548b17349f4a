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

import logging
from collections.abc import Collection, Mapping

from factstream.agents.series import NamespaceSeries
from factstream.metrics import WorkerMetrics
from factstream.store.base import FactStore
from factstream.streams.placement import Placement, partition_of

__all__ = ["PartitionGauges", "partition_of"]

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
