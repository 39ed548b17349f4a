"""Vectors a Weaviate node lost to a SIGKILL, indexed again once it is back (issue 25).

Weaviate v1.38.14 keeps the HNSW commit-log entries of a shard's last batch in a buffer
until the shard's next write (``WeaviateFactStore._flush_vectors``). A node SIGKILLed while
a write is in flight on it, or while it lags behind the write quorum, restarts with those
objects in its object store but not in its vector index: listed, fetched, found by BM25,
never by a vector search through that node. Async replication and read repair compare
objects, which agree, so nothing in Weaviate brings the vectors back.

:class:`ReplicaRepair` is the bookkeeping for the fix: it remembers which facts this process
wrote and when, watches the cluster's nodes, and when a node that was seen down is healthy
again names the facts written in the ``window_s`` seconds before it went down. The store
writes each of them twice (:func:`nudged` vector, then its own): a changed vector gives the
object a new doc id on every replica, so each replica adds it to its vector index again.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Collection, Mapping, Sequence

import numpy as np

__all__ = ["CLUSTER", "ReplicaRepair", "nudged"]

# The name under which a cluster that could not be asked at all is remembered as down.
CLUSTER = "<cluster>"


def nudged(vector: Sequence[float]) -> list[float]:
    """``vector`` with its last component moved to the next float32 towards zero.

    Weaviate stores float32: this is the smallest change it sees as a new vector (cosine
    to the original within 1e-7), so a write of it re-indexes the object.
    """
    out = [float(x) for x in vector]
    last = np.float32(out[-1])
    out[-1] = float(np.nextafter(last, np.float32(0.0) if last != 0 else np.float32(1.0)))
    return out


class ReplicaRepair:
    """Facts this process wrote, and which of them a node that came back may have lost.

    Args:
        window_s: how long before a node was first seen down a write may still be missing
            from its vector index (the write in flight and the writes it lagged behind).
        clock: wall-clock seconds (tests pass their own).
    """

    def __init__(self, window_s: float, clock: Callable[[], float] = time.time) -> None:
        if window_s <= 0:
            raise ValueError("window_s must be positive")
        self.window_s, self._clock = window_s, clock
        self._writes: deque[tuple[float, str, tuple[str, ...]]] = deque()  # oldest first
        self._down: dict[str, float] = {}  # node -> when first seen down
        self._until: dict[str, float] = {}  # node -> when last seen down, until down for sure
        self._sure: set[str] = set()  # nodes a listing has shown down
        self._known: set[str] = set()

    def now(self) -> float:
        return self._clock()

    def wrote(self, namespace: str, fact_ids: Collection[str], began: float | None = None) -> None:
        """A write of ``fact_ids`` begins (or began at ``began``), whether or not it succeeds:
        a failed attempt may have reached a replica that then died."""
        if fact_ids:
            self._writes.append(
                (self._clock() if began is None else began, namespace, tuple(fact_ids))
            )
        self._prune()

    @property
    def down(self) -> dict[str, float]:
        """The nodes seen down and not yet back, with when each was first seen down."""
        return dict(self._down)

    def observe(self, health: Mapping[str, bool] | None) -> dict[str, set[str]]:
        """One look at the cluster: node name -> healthy, or None if it could not be asked.

        Returns the facts to index again, by namespace: those whose write began from
        ``window_s`` before a node that is healthy again was first seen down until it was
        seen down for sure. A node known before and missing from ``health``, or listed as
        not healthy, is down for sure; when the cluster cannot be asked, every known node
        (or, before any is known, the cluster) may be down: it counts as down from then,
        and as down for sure at the latest such look until a listing says (a node SIGKILLed
        after a look that could not ask is then still covered).
        """
        now = self._clock()
        back: list[tuple[float, float]] = []
        if health is None:
            for node in self._known or {CLUSTER}:
                self._seen_down(node, now, sure=False)
        else:
            for node in self._known - set(health):
                self._seen_down(node, now, sure=True)
            for node, healthy in health.items():
                self._known.add(node)
                if not healthy:
                    self._seen_down(node, now, sure=True)
                elif node in self._down:
                    back.append(self._back(node))
            if health and CLUSTER in self._down:
                back.append(self._back(CLUSTER))
        due: dict[str, set[str]] = {}
        for since, until in back:
            for began, namespace, fact_ids in self._writes:
                if since - self.window_s <= began <= until:
                    due.setdefault(namespace, set()).update(fact_ids)
        self._prune()
        return due

    def _seen_down(self, node: str, now: float, *, sure: bool) -> None:
        self._down.setdefault(node, now)
        if node not in self._sure:
            self._until[node] = now
            if sure:
                self._sure.add(node)

    def _back(self, node: str) -> tuple[float, float]:
        """The node is healthy again: when it was first seen down, and until when."""
        self._sure.discard(node)
        return self._down.pop(node), self._until.pop(node)

    def _prune(self) -> None:
        """Forget writes no node that is down (or may go down now) can still need."""
        cutoff = min([self._clock(), *self._down.values()]) - self.window_s
        while self._writes and self._writes[0][0] < cutoff:
            self._writes.popleft()
