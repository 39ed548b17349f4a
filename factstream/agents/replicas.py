"""The worker indexes again what a Weaviate node lost to a SIGKILL (issue 25).

Every ``store.replica_poll_s`` the worker asks Weaviate which nodes are healthy
(``WeaviateFactStore.node_health``). When a node it saw down is back, the facts this worker
wrote in the ``store.reindex_window_s`` before that node went down are written again so that
every replica indexes their vectors (``factstream.store.replicas``), for the namespaces whose
documents partition the worker still owns: a namespace that moved to another worker is that
worker's to write, and a write from here could undo its newer one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection
from typing import Any, Protocol, runtime_checkable

import faust

from factstream.agents.gauges import PartitionGauges
from factstream.clients import Clients
from factstream.config import Settings
from factstream.errors import StoreError
from factstream.store.replicas import ReplicaRepair
from factstream.streams.admin import topic_partitions
from factstream.topics.definitions import TopicName, topic_name

__all__ = ["Reindexing", "ReplicaWatch", "track_replicas"]

log = logging.getLogger(__name__)

# Facts per reindex call, and how long one may take: the store's namespace write lock is
# held meanwhile, so the editor's next commit in that namespace waits at most this long
# (a Weaviate node just back can be slow to answer a write at consistency ALL).
_CHUNK, _CHUNK_TIMEOUT_S = 100, 10.0


@runtime_checkable
class Reindexing(Protocol):
    """A store that remembers its writes and can have them indexed again (Weaviate's)."""

    replicas: ReplicaRepair | None

    async def node_health(self) -> dict[str, bool] | None: ...

    async def reindex(self, namespace: str, fact_ids: Collection[str]) -> int: ...


class ReplicaWatch:
    """One worker's watch: the facts still to index again, retried until done or not ours."""

    def __init__(
        self,
        store: Reindexing,
        owns: Callable[[str], Awaitable[bool]],
    ) -> None:
        self._store, self._owns = store, owns
        self.pending: dict[str, set[str]] = {}
        self.reindexed = 0

    async def poll(self) -> None:
        """Look at the nodes once; index again what a node that came back may have lost."""
        repair = self._store.replicas
        if repair is None:
            return
        for namespace, fact_ids in repair.observe(await self._store.node_health()).items():
            self.pending.setdefault(namespace, set()).update(fact_ids)
        for namespace in list(self.pending):
            fact_ids = self.pending[namespace]
            if not await self._owns(namespace):
                log.warning(
                    "%d facts of namespace %s not indexed again: its partition is no longer "
                    "this worker's",
                    len(fact_ids),
                    namespace,
                )
                del self.pending[namespace]
                continue
            count = 0
            for chunk in _chunks(sorted(fact_ids), _CHUNK):
                try:
                    count += await asyncio.wait_for(
                        self._store.reindex(namespace, chunk), _CHUNK_TIMEOUT_S
                    )
                except (StoreError, TimeoutError) as exc:
                    log.warning("facts not indexed again yet (next poll retries): %r", exc)
                    return
                fact_ids.difference_update(chunk)
            del self.pending[namespace]
            self.reindexed += count
            log.info(
                "indexed again %d facts of namespace %s written before a Weaviate node went down",
                count,
                namespace,
            )


def _chunks(items: list[str], size: int) -> list[list[str]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def track_replicas(
    app: faust.App,
    settings: Settings,
    clients: Callable[[], Awaitable[Clients]],
    gauges: Callable[[], Awaitable[PartitionGauges]],
) -> None:
    """Run a :class:`ReplicaWatch` on the worker's store every ``store.replica_poll_s``."""
    if settings.store.reindex_window_s <= 0:
        return
    topic = topic_name(TopicName.DOCUMENTS, settings.kafka.topic_prefix)
    watch: list[ReplicaWatch] = []
    partitions: list[int] = []  # the documents topic's count, asked of Kafka once

    async def owns(namespace: str) -> bool:
        if not partitions:
            partitions.append(len(await topic_partitions(settings.kafka, topic)))
        return (await gauges()).owns(namespace, partitions[0])

    @app.timer(interval=settings.store.replica_poll_s)  # type: ignore[untyped-decorator]
    async def _watch_replicas() -> None:
        if not watch:
            store: Any = (await clients()).store
            if not isinstance(store, Reindexing):
                return
            watch.append(ReplicaWatch(store, owns))
        try:
            await watch[0].poll()
        except Exception as exc:  # noqa: BLE001 - the next poll tries again
            log.warning("Weaviate's nodes not watched this time: %r", exc)
