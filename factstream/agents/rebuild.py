"""Rebuild a namespace's Weaviate state from the changelog (the source of truth)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from factstream.clients import Clients
from factstream.knowledge.materializer import Materializer
from factstream.streams.changelog import first_batches, in_input_order, read_changelog

__all__ = ["RebuildReport", "rebuild_namespace"]


@dataclass(frozen=True)
class RebuildReport:
    namespace: str
    batches: int
    edits: int
    facts: int


async def rebuild_namespace(
    clients: Clients, namespace: str, progress: Callable[[int, int], None] | None = None
) -> RebuildReport:
    """Drop the namespace from the store, then apply its first batch per document in order.

    Args:
        clients: the store and embedder to rebuild into.
        namespace: the namespace to rebuild.
        progress: called with (batches done, batches in all) as it goes.
    """
    kafka = clients.settings.kafka
    edits = [e async for e in read_changelog(kafka) if e.namespace == namespace]
    batches = in_input_order(first_batches(edits).values())
    await clients.store.drop_namespace(namespace)
    materializer = Materializer(clients.store, clients.embedder)  # no republishing of facts
    changed: set[str] = set()
    for done, batch in enumerate(batches, start=1):
        outcome = await materializer.apply(batch)
        changed.update(f.fact_id for f in outcome.changed)
        if progress is not None:
            progress(done, len(batches))
    return RebuildReport(namespace, len(batches), sum(len(b) for b in batches), len(changed))
