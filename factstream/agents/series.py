"""Which namespaces get Prometheus series of their own, so the series do not grow with them.

Totals are always exported (``factstream_edits_total`` by op). A namespace gets series of
its own (``factstream_namespace_edits_total``, ``factstream_facts``) only when it is on the
opt-in list (``FACTSTREAM_WORKER_METRICS_NAMESPACES``) or among the ``busiest`` namespaces
by edits (``FACTSTREAM_WORKER_METRICS_BUSIEST``). The busiest are found with the
Space-Saving algorithm (Metwally et al., 2005) over a fixed number of counters, so the
memory is bounded too, however many namespaces there are: a namespace that leaves the
busiest loses its series (its counter restarts from 0 if it comes back, which ``rate``
reads as a counter reset).
"""

from __future__ import annotations

import contextlib
import heapq
from collections.abc import Collection, Iterable

from factstream.metrics import WorkerMetrics
from factstream.store.base import FactCounts
from factstream.topics.records import EditOp

__all__ = ["NamespaceSeries"]

# Space-Saving counters per series wanted: more counters, fewer namespaces mistaken for busy.
_COUNTERS_PER_SLOT = 8
_MIN_COUNTERS = 64


class NamespaceSeries:
    """The namespaces exported one by one, and the series of each.

    Args:
        metrics: The worker's metrics (the edits counters and the facts gauge).
        chosen: Namespaces always exported (the opt-in list).
        busiest: How many of the busiest namespaces (by edits) are exported besides.
    """

    def __init__(self, metrics: WorkerMetrics, chosen: Collection[str], busiest: int) -> None:
        self._metrics, self._chosen, self._busiest = metrics, frozenset(chosen), busiest
        self._capacity = max(_COUNTERS_PER_SLOT * busiest, _MIN_COUNTERS) if busiest else 0
        self._counts: dict[str, int] = {}  # Space-Saving: namespace -> estimated edits
        self._top: frozenset[str] = frozenset()
        self._facts: dict[str, int] = {}  # namespace with a facts gauge -> its partition

    @property
    def chosen(self) -> frozenset[str]:
        """The opt-in list."""
        return self._chosen

    def exported(self, namespace: str) -> bool:
        """Whether the namespace has series of its own now."""
        return namespace in self._chosen or namespace in self._top

    def exported_now(self) -> frozenset[str]:
        """Every namespace with series of its own now."""
        return self._chosen | self._top

    def tracked(self) -> int:
        """Namespaces the busiest-namespaces counters hold (at most their capacity)."""
        return len(self._counts)

    def edited(self, namespace: str, ops: Iterable[EditOp]) -> None:
        """Count a batch's edits: in the totals, and in the namespace's series if it has them
        (after it is counted as busy, when it becomes one of the busiest)."""
        ops = list(ops)
        for op in ops:
            self._metrics.edits.labels(op=op.value).inc()
        if ops:
            self._count(namespace, len(ops))
        if self.exported(namespace):
            for op in ops:
                self._metrics.namespace_edits.labels(namespace=namespace, op=op.value).inc()

    def set_facts(self, namespace: str, partition: int, counts: FactCounts) -> None:
        """The namespace's facts gauge, if it has series."""
        if not self.exported(namespace):
            return
        self._facts[namespace] = partition
        self._metrics.facts.labels(namespace, "true").set(counts.true)
        self._metrics.facts.labels(namespace, "false").set(counts.false)

    def revoke(self, partitions: Collection[int]) -> None:
        """The partitions went to another worker: their namespaces' facts are theirs to say."""
        for namespace, partition in list(self._facts.items()):
            if partition in partitions:
                self._drop_facts(namespace)

    def _count(self, namespace: str, edits: int) -> None:
        if not self._capacity:
            return
        if namespace in self._counts or len(self._counts) < self._capacity:
            self._counts[namespace] = self._counts.get(namespace, 0) + edits
        else:  # Space-Saving: the least counted gives its counter up, its count carried over
            least = min(self._counts, key=self._counts.__getitem__)
            self._counts[namespace] = self._counts.pop(least) + edits
        top = heapq.nlargest(self._busiest, self._counts.items(), key=lambda item: item[1])
        now = frozenset(name for name, _ in top)
        if now != self._top:
            left, self._top = self._top - now, now
            for gone in left - self._chosen:
                self._drop(gone)

    def _drop(self, namespace: str) -> None:
        for op in EditOp:
            with contextlib.suppress(KeyError):  # never had this op
                self._metrics.namespace_edits.remove(namespace, op.value)
        self._drop_facts(namespace)

    def _drop_facts(self, namespace: str) -> None:
        if self._facts.pop(namespace, None) is not None:
            for truth in ("true", "false"):
                self._metrics.facts.remove(namespace, truth)
