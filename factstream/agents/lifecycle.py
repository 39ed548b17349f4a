"""The worker's idle-tenant sweep: namespaces unused for FACTSTREAM_STORE_TENANT_IDLE_S are
made inactive in Weaviate, so a node holds many more namespaces than it has memory for.

Each worker sweeps the namespaces whose documents partition it owns (so two workers never
sweep one namespace), every quarter of the idle time (at most every 5 minutes). A sweep
makes inactive the namespaces this worker used that have gone idle since the last one, from
its own last-use map: nothing is listed, so a sweep costs what went idle, not every tenant
there is. Every tenant is listed (the owned active ones not used lately made inactive) at
the first sweep, when the owned partitions change (another worker's namespaces arrive), and
every ``_LIST_EVERY`` sweeps (tenants activated by other processes: asks). An inactive
tenant comes back at its next read or write by itself (Weaviate's auto tenant activation):
an edit or a question never notices, beyond the activation's milliseconds. The changelog
stays the source of truth: ``factstream rebuild`` drops and replays inactive namespaces as
it does active ones.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import faust

from factstream.agents.gauges import PartitionGauges
from factstream.clients import Clients
from factstream.config import Settings
from factstream.store.base import Deactivating
from factstream.streams.admin import topic_partitions
from factstream.topics.definitions import TopicName, topic_name

__all__ = ["Listing", "sweep_interval", "track_tenants"]

log = logging.getLogger(__name__)

_MOST_INTERVAL_S = 300.0
_LEAST_INTERVAL_S = 0.5
_LIST_EVERY = 12  # sweeps: every 3 idle times (an hour at most)


class Listing:
    """Whether a sweep lists every tenant: after the owned partitions change (the first
    sweep's too) and every ``every`` sweeps; again after a sweep that failed."""

    def __init__(self, every: int = _LIST_EVERY) -> None:
        self._every, self._since = every, 0
        self._owned: frozenset[int] | None = None  # at the last listing

    def due(self, owned: frozenset[int]) -> bool:
        """This sweep's answer (counted as made)."""
        if owned != self._owned or self._since + 1 >= self._every:
            self._owned, self._since = owned, 0
            return True
        self._since += 1
        return False

    def failed(self) -> None:
        """The sweep failed: the next one lists."""
        self._owned = None


def sweep_interval(idle_s: float) -> float:
    """Seconds between sweeps: a quarter of the idle time, within [0.5 s, 5 min]."""
    return min(max(idle_s / 4, _LEAST_INTERVAL_S), _MOST_INTERVAL_S)


def track_tenants(
    app: faust.App,
    settings: Settings,
    clients: Callable[[], Awaitable[Clients]],
    gauges: Callable[[], Awaitable[PartitionGauges]],
) -> None:
    """Sweep the owned namespaces' idle tenants every :func:`sweep_interval`."""
    idle_s = settings.store.tenant_idle_s
    if idle_s <= 0:
        return
    topic = topic_name(TopicName.DOCUMENTS, settings.kafka.topic_prefix)
    partitions: list[int] = []  # the documents topic's count, asked of Kafka once
    listing = Listing()

    @app.timer(interval=sweep_interval(idle_s))  # type: ignore[untyped-decorator]
    async def _sweep_tenants() -> None:
        built = await clients()
        store: Any = built.store
        if not isinstance(store, Deactivating):
            return
        try:
            if not partitions:
                partitions.append(len(await topic_partitions(settings.kafka, topic)))
            owned = await gauges()
            if not owned.owned:
                return
            swept = await store.deactivate_idle(
                lambda ns: owned.owns(ns, partitions[0]), listing=listing.due(owned.owned)
            )
        except Exception as exc:  # noqa: BLE001 - the next sweep tries again
            listing.failed()
            log.warning("idle tenants not swept this time: %r", exc)
            return
        metrics = built.metrics.worker
        metrics.tenants_active.set(swept.active)
        if swept.deactivated:
            metrics.tenants_deactivated.inc(len(swept.deactivated))
            log.info(
                "made %d idle namespaces inactive (unused for %.0fs); %d stay active",
                len(swept.deactivated),
                idle_s,
                swept.active,
            )
