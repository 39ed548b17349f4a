"""The changelog on Kafka: publish a document's edit batch atomically, read batches back.

A batch goes out in one Kafka transaction, and readers use read_committed, so a reader sees
a document's whole batch or none of it: a crash mid-publish leaves no half batch behind.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import time
import uuid
from collections.abc import AsyncIterator, Iterable, Sequence
from datetime import UTC, datetime

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaTimeoutError

from factstream.config import KafkaSettings
from factstream.streams.browse import assigned_reader
from factstream.streams.producer import Headers, TransactionalProducer
from factstream.topics.definitions import TopicName, topic_name
from factstream.topics.records import DeadLetter, Document, Fact, FactEdit, Record

__all__ = [
    "ChangelogPublisher",
    "first_batches",
    "in_input_order",
    "read_changelog",
    "settled_ends",
]

log = logging.getLogger(__name__)

# The broker aborts a transaction whose producer died once its timeout (at most Kafka's
# transaction.max.timeout.ms, 15 minutes) has passed; no reader waits longer than that.
_SETTLE_TIMEOUT_S = 900.0


class ChangelogPublisher:
    """A transactional producer for factstream's output topics.

    Args:
        kafka: the cluster and the topic prefix.
        client_id: the Kafka client id.
        transactional_id: fixed, to fence every earlier producer with that id (the worker's
            per-partition publishers); by default unique per process, so it never waits on
            a predecessor's open transaction (the broker aborts that one at its timeout).
    """

    def __init__(
        self,
        kafka: KafkaSettings,
        client_id: str = "factstream",
        transactional_id: str | None = None,
    ) -> None:
        self.sender = TransactionalProducer(
            kafka, client_id, transactional_id or f"{client_id}-{uuid.uuid4().hex}"
        )

    async def start(self) -> None:
        await self.sender.start()

    async def stop(self) -> None:
        await self.sender.stop()

    async def _send_all(
        self, name: TopicName, items: Sequence[tuple[bytes | None, Record]]
    ) -> None:
        await self.sender.send_atomically([(name, key, record) for key, record in items])

    async def publish_batch(self, edits: Sequence[FactEdit], facts: Sequence[Fact] = ()) -> None:
        """One document's edits on ``factstream.fact-edits``, keyed by fact id, and the new
        states of the facts they change (``facts``) on ``factstream.facts``, in one
        transaction (one commit a document, not one for the batch and one for the states)."""
        await self.sender.send_atomically(
            [(TopicName.FACT_EDITS, e.fact_id.encode(), e) for e in edits]
            + [(TopicName.FACTS, f.fact_id.encode(), f) for f in facts]
        )

    async def publish_facts(self, facts: Sequence[Fact]) -> None:
        """The latest state of facts on the compacted ``factstream.facts``."""
        await self._send_all(TopicName.FACTS, [(f.fact_id.encode(), f) for f in facts])

    async def publish_documents(self, documents: Sequence[Document]) -> None:
        """Documents on ``factstream.documents``, keyed by namespace (this keeps their order)."""
        await self._send_all(TopicName.DOCUMENTS, [(d.namespace.encode(), d) for d in documents])

    async def republish_documents(
        self, records: Sequence[tuple[bytes | None, bytes, Headers]]
    ) -> None:
        """Documents as the bytes they first came as, under their first keys (dead letters
        replayed), atomically."""
        await self.sender.send_bytes_atomically(TopicName.DOCUMENTS, records)

    async def review(self, document: Document) -> None:
        """A document held back for a person (over the blast radius)."""
        await self._send_all(TopicName.REVIEW, [(document.namespace.encode(), document)])

    async def dead_letter(
        self,
        *,
        topic: str,
        partition: int,
        offset: int,
        key: bytes | None,
        value: bytes | None,
        reason: str,
        error_type: str,
    ) -> DeadLetter:
        """Bad input with its reason and its original bytes, under its original key."""
        letter = DeadLetter(
            topic=topic,
            partition=partition,
            offset=offset,
            key=base64.b64encode(key).decode() if key is not None else None,
            value=base64.b64encode(value or b"").decode(),
            reason=reason,
            error_type=error_type,
            failed_at=datetime.now(UTC),
        )
        await self._send_all(TopicName.DOCUMENTS_DLQ, [(key, letter)])
        return letter


async def read_changelog(
    kafka: KafkaSettings, *, since_ms: int | None = None
) -> AsyncIterator[FactEdit]:
    """Every committed edit on the changelog (from ``since_ms``, else from the start) up to
    the end as it was when reading began; in order within each partition.

    Reading first waits until every transaction open at that moment has ended. A worker
    killed inside one leaves it open until the broker times it out, and read_committed
    readers stop there: batches committed after it (by the next worker) would be missed.
    """
    topic = topic_name(TopicName.FACT_EDITS, kafka.topic_prefix)
    async with assigned_reader(kafka, topic) as (consumer, parts):
        ends = await settled_ends(kafka, consumer, parts)
        starts = await _start_offsets(consumer, parts, since_ms)
        for tp in parts:
            if starts[tp] >= ends[tp]:
                continue
            consumer.seek(tp, starts[tp])
            async for edit in _read_partition(consumer, tp, ends[tp]):
                yield edit


async def settled_ends(
    kafka: KafkaSettings, consumer: AIOKafkaConsumer, parts: list[TopicPartition]
) -> dict[TopicPartition, int]:
    """The read_committed end offsets once no transaction open now is still undecided."""
    latest = AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers, isolation_level="read_uncommitted"
    )
    await latest.start()
    try:
        high: dict[TopicPartition, int] = await latest.end_offsets(parts)
    finally:
        await latest.stop()
    deadline = time.monotonic() + _SETTLE_TIMEOUT_S
    waiting = False
    while True:
        stable: dict[TopicPartition, int] = await consumer.end_offsets(parts)
        if all(stable[tp] >= high[tp] for tp in parts):
            if waiting:
                log.info("changelog: the open transactions ended; reading on")
            return stable
        if time.monotonic() > deadline:
            raise KafkaTimeoutError(f"changelog transactions still open after {_SETTLE_TIMEOUT_S}s")
        if not waiting:
            waiting = True
            open_at = {tp.partition: stable[tp] for tp in parts if stable[tp] < high[tp]}
            log.warning(
                "changelog: transactions open at %s (a producer that died inside one?); "
                "waiting until the broker ends them",
                open_at,
            )
        await asyncio.sleep(0.5)


async def _start_offsets(
    consumer: AIOKafkaConsumer, parts: list[TopicPartition], since_ms: int | None
) -> dict[TopicPartition, int]:
    beginnings: dict[TopicPartition, int] = await consumer.beginning_offsets(parts)
    if since_ms is None:
        return beginnings
    found = await consumer.offsets_for_times({tp: since_ms for tp in parts})
    ends: dict[TopicPartition, int] = await consumer.end_offsets(parts)
    return {tp: found[tp].offset if found[tp] is not None else ends[tp] for tp in parts}


async def _read_partition(
    consumer: AIOKafkaConsumer, tp: TopicPartition, end: int
) -> AsyncIterator[FactEdit]:
    # Transaction markers occupy offsets but are never returned, so compare positions.
    while await consumer.position(tp) < end:
        batch = await consumer.getmany(tp, timeout_ms=1000)
        for record in batch.get(tp, []):
            yield FactEdit.from_bytes(record.value)


def first_batches(edits: Sequence[FactEdit]) -> dict[tuple[str, str], list[FactEdit]]:
    """The first whole batch per (namespace, document id), in batch order.

    "First" is the batch created first (the one a worker applied first). Later batches for
    the same document are ignored; so are copies of an edit (a batch published twice) and
    batches that are not whole (a reader that starts at a time may start inside one).
    """
    batches: dict[str, dict[int, FactEdit]] = {}
    for edit in edits:
        batches.setdefault(edit.batch.id, {}).setdefault(edit.batch.position, edit)
    whole = [
        [by_position[i] for i in range(size)]
        for by_position in batches.values()
        if set(by_position) == set(range(size := next(iter(by_position.values())).batch.size))
    ]
    whole.sort(key=lambda batch: (batch[0].created_at, batch[0].batch.id))
    result: dict[tuple[str, str], list[FactEdit]] = {}
    for batch in whole:
        result.setdefault((batch[0].namespace, batch[0].document_id), batch)
    return result


def in_input_order(batches: Iterable[list[FactEdit]]) -> list[list[FactEdit]]:
    """Batches in the order their documents were read (a namespace lives in one partition)."""
    return sorted(
        batches, key=lambda b: (b[0].input.topic, b[0].input.partition, b[0].input.offset)
    )
