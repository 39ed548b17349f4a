"""Apply edit batches from the changelog to the fact store, idempotently; first batch wins.

The store is a projection of the changelog. Applying a batch: skip it if its document
already has an applied batch (the first one per document wins, so a replay or a duplicate
changes nothing), fold the edits into the touched facts, embed and upsert what changed,
publish the new fact states, and only then record the batch as applied.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from factstream.embed.base import Embedder
from factstream.knowledge.apply import ApplyResult, apply_edits, touched_fact_ids
from factstream.store.base import AppliedBatch, FactStore, StoredFact
from factstream.topics.records import Fact, FactEdit

__all__ = ["FactSink", "Materializer", "Outcome", "check_batch"]

log = logging.getLogger(__name__)


class FactSink(Protocol):
    """Where new fact states go besides the store (the compacted ``factstream.facts``)."""

    async def publish_facts(self, facts: Sequence[Fact]) -> None: ...


@dataclass(frozen=True)
class Outcome:
    """What applying one batch did."""

    applied: bool  # False: this document already had a batch (this one was a duplicate)
    changed: list[Fact]
    skipped: list[tuple[FactEdit, str]]
    stored: list[StoredFact] = field(default_factory=list)  # the changed facts, with vectors


def check_batch(edits: Sequence[FactEdit]) -> AppliedBatch:
    """The batch the edits form; raises ValueError unless they are one whole document batch."""
    if not edits:
        raise ValueError("an empty batch")
    first = edits[0]
    size, batch_id = first.batch.size, first.batch.id
    if [e.batch.position for e in edits] != list(range(size)):
        raise ValueError(f"batch {batch_id} is incomplete or out of order")
    if any(
        (e.batch.id, e.document_id, e.namespace) != (batch_id, first.document_id, first.namespace)
        for e in edits
    ):
        raise ValueError(f"batch {batch_id} mixes documents or namespaces")
    return AppliedBatch(document_id=first.document_id, batch_id=batch_id, size=size)


@dataclass(frozen=True)
class Materializer:
    """Applies whole batches to the store and publishes the new fact states."""

    store: FactStore
    embedder: Embedder
    sink: FactSink | None = None

    async def apply(self, edits: Sequence[FactEdit]) -> Outcome:
        """Apply one document's whole batch (in batch order)."""
        batch = check_batch(edits)
        namespace = edits[0].namespace
        if await self.store.applied_batch(namespace, batch.document_id) is not None:
            return Outcome(applied=False, changed=[], skipped=[])
        current = await self.store.get(namespace, sorted(touched_fact_ids(edits)))
        result: ApplyResult = apply_edits(current, edits)
        changed = list(result.changed.values())
        stored: list[StoredFact] = []
        if changed:
            vectors = await self.embedder.embed_batch([fact.text for fact in changed])
            stored = [StoredFact(f, v) for f, v in zip(changed, vectors, strict=True)]
            await self.store.upsert(namespace, stored)
            if self.sink is not None:
                await self.sink.publish_facts(changed)
        await self.store.record_batch(namespace, batch)
        return Outcome(applied=True, changed=changed, skipped=result.skipped, stored=stored)

    async def record_empty(self, namespace: str, document_id: str) -> None:
        """Remember that a document was edited and decided nothing (no batch to apply)."""
        await self.store.record_batch(
            namespace,
            AppliedBatch(document_id=document_id, batch_id=f"{document_id}@empty", size=0),
        )
