"""Apply edit batches from the changelog to the fact store, idempotently; first batch wins.

The store is a projection of the changelog. Applying a batch: skip it if its document
already has an applied batch (the first one per document wins, so a replay or a duplicate
changes nothing), fold the edits into the touched facts, embed the changed facts whose text
changed (the others keep their stored vectors) and upsert what changed, publish the new fact
states, and only then record the batch as applied.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from factstream.edit.ahead import FactVectors
from factstream.edit.apply import ApplyResult, apply_edits, touched_fact_ids
from factstream.embed.base import Embedder, Vector
from factstream.metrics import timed
from factstream.store.base import AppliedBatch, FactStore, StoredFact
from factstream.topics.records import Fact, FactEdit

__all__ = ["FactSink", "Materializer", "Outcome", "Pending", "check_batch"]

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
class Pending:
    """A batch folded into the facts it touches, nothing written yet (``prepare``)."""

    namespace: str
    batch: AppliedBatch
    before: dict[str, StoredFact]  # the touched facts as stored, with their vectors
    result: ApplyResult

    @property
    def changed(self) -> list[Fact]:
        """The new states of the facts the batch changes."""
        return list(self.result.changed.values())


@dataclass(frozen=True)
class Materializer:
    """Applies whole batches to the store and publishes the new fact states."""

    store: FactStore
    embedder: Embedder
    sink: FactSink | None = None

    async def apply(
        self,
        edits: Sequence[FactEdit],
        steps: dict[str, float] | None = None,
        *,
        unapplied: bool = False,
        ahead: FactVectors | None = None,
    ) -> Outcome:
        """Apply one document's whole batch (in batch order).

        ``steps``: seconds per step (``apply_`` read, embed, write, publish, record) are
        added to it. ``unapplied``: the caller knows that the document has no applied batch
        (the editor, which commits its documents one at a time), so it is not read again.
        ``ahead``: vectors of the new texts, computed beforehand (the others are embedded).
        """
        steps = {} if steps is None else steps
        pending = await self.prepare(edits, steps, unapplied=unapplied)
        if pending is None:
            return Outcome(applied=False, changed=[], skipped=[])
        return await self.write(pending, steps, ahead=ahead)

    async def prepare(
        self,
        edits: Sequence[FactEdit],
        steps: dict[str, float] | None = None,
        *,
        unapplied: bool = False,
        touched: Awaitable[dict[str, StoredFact]] | None = None,
    ) -> Pending | None:
        """The first half of :meth:`apply`: read the facts the batch touches and fold its
        edits into them, writing nothing; None if the document already has an applied batch
        (never with ``unapplied``). The editor publishes the new fact states in the
        transaction of the batch itself, then calls :meth:`write`. ``touched``: the read of
        the touched facts (``read_touched``), begun already on the store as it stands."""
        steps = {} if steps is None else steps
        batch = check_batch(edits)
        namespace = edits[0].namespace
        with timed(steps, "apply_read"):
            if not unapplied and await self.store.applied_batch(namespace, batch.document_id):
                return None
            if touched is None:
                touched = self.read_touched(edits)
            before = await touched
        result: ApplyResult = apply_edits({i: s.fact for i, s in before.items()}, edits)
        return Pending(namespace, batch, before, result)

    async def read_touched(self, edits: Sequence[FactEdit]) -> dict[str, StoredFact]:
        """The facts the edits touch as stored now, with their vectors (one read)."""
        return await self.store.get_stored(edits[0].namespace, sorted(touched_fact_ids(edits)))

    async def write(
        self,
        pending: Pending,
        steps: dict[str, float] | None = None,
        *,
        ahead: FactVectors | None = None,
        published: bool = False,
        written: Callable[[list[StoredFact]], None] | None = None,
    ) -> Outcome:
        """The second half of :meth:`apply`: embed and upsert the changed facts, publish
        their new states (unless ``published``: the caller sent them already, with the batch),
        and only then record the batch as applied. ``written``: told the facts stored, once
        they are written and before the batch is recorded (the facts collection then holds
        all the batch writes there)."""
        steps = {} if steps is None else steps
        changed = pending.changed
        stored: list[StoredFact] = []
        if changed:
            with timed(steps, "apply_embed"):
                known = {} if ahead is None else await ahead.known()
                stored = await self._vectors(changed, pending.before, known)
            with timed(steps, "apply_write"):
                await self.store.upsert(pending.namespace, stored)
            if self.sink is not None and not published:
                with timed(steps, "apply_publish"):
                    await self.sink.publish_facts(changed)
        if written is not None:
            written(stored)
        with timed(steps, "apply_record"):
            await self.store.record_batch(pending.namespace, pending.batch)
        return Outcome(applied=True, changed=changed, skipped=pending.result.skipped, stored=stored)

    async def _vectors(
        self, changed: list[Fact], stored: dict[str, StoredFact], known: dict[str, Vector]
    ) -> list[StoredFact]:
        """``changed`` with their vectors: a fact whose text is the stored one's (an
        invalidation, a reinforcement, a closed interval) keeps its stored vector; the
        others take a ``known`` one, or are embedded, in one call."""

        def kept(fact: Fact) -> StoredFact | None:
            before = stored.get(fact.fact_id)
            return before if before is not None and before.fact.text == fact.text else None

        fresh = [f.text for f in changed if kept(f) is None and f.text not in known]
        vectors = dict(
            zip(fresh, await self.embedder.embed_batch(fresh) if fresh else [], strict=True)
        )
        out = []
        for fact in changed:
            before = kept(fact)
            vector = before.vector if before else known.get(fact.text, vectors.get(fact.text))
            assert vector is not None  # noqa: S101 - known or just embedded
            out.append(StoredFact(fact, vector))
        return out

    async def record_empty(self, namespace: str, document_id: str) -> None:
        """Remember that a document was edited and decided nothing (no batch to apply)."""
        await self.store.record_batch(
            namespace,
            AppliedBatch(document_id=document_id, batch_id=f"{document_id}@empty", size=0),
        )
