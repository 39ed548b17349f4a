"""Rebuild Weaviate state from the changelog (the source of truth): one namespace, or all."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from factstream.clients import Clients
from factstream.config import KafkaSettings
from factstream.edit.materializer import Materializer
from factstream.streams.changelog import first_batches, in_input_order, read_changelog
from factstream.topics.records import FactEdit

__all__ = ["Progress", "RebuildReport", "rebuild_namespaces"]

# (namespace, batches done, batches in all)
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class RebuildReport:
    namespace: str
    batches: int
    edits: int
    facts: int


async def rebuild_namespaces(
    clients: Clients,
    kafka: KafkaSettings,
    namespaces: list[str] | None = None,
    progress: Progress | None = None,
) -> list[RebuildReport]:
    """Rebuild each of ``namespaces`` (None: every namespace on the changelog), reading the
    changelog once; after a lost Weaviate disk, None restores everything there was.

    A namespace asked for by name but absent from the changelog is dropped and left empty.
    """
    wanted = set(namespaces) if namespaces is not None else None
    edits: dict[str, list[FactEdit]] = {name: [] for name in namespaces or []}
    async for edit in read_changelog(kafka):
        if wanted is None or edit.namespace in wanted:
            edits.setdefault(edit.namespace, []).append(edit)
    return [
        await _rebuild(clients, namespace, edits[namespace], progress)
        for namespace in sorted(edits)
    ]


async def _rebuild(
    clients: Clients, namespace: str, edits: list[FactEdit], progress: Progress | None
) -> RebuildReport:
    batches = in_input_order(first_batches(edits).values())
    await clients.store.drop_namespace(namespace)
    materializer = Materializer(clients.store, clients.embedder)  # no republishing of facts
    changed: set[str] = set()
    for done, batch in enumerate(batches, start=1):
        outcome = await materializer.apply(batch)
        changed.update(f.fact_id for f in outcome.changed)
        if progress is not None:
            progress(namespace, done, len(batches))
    return RebuildReport(namespace, len(batches), sum(len(b) for b in batches), len(changed))
