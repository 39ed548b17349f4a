"""What the feed poller published, kept on the compacted topic ``factstream.feed-state``.

Each Document and the state record that says it was published go out in ONE Kafka
transaction, and state is read back with read_committed: after a crash either both are
visible or neither, so an entry is never published twice and never forgotten. The producer's
transactional id is stable, so a restarted poller fences a predecessor that still runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aiokafka import AIOKafkaConsumer, TopicPartition

from factstream.config import KafkaSettings
from factstream.streams.admin import topic_partitions
from factstream.streams.producer import Outgoing, TransactionalProducer
from factstream.topics.definitions import TopicName, topic_name
from factstream.topics.records import Document, FeedEntryState

__all__ = ["FeedPublisher", "FeedState", "Publication", "read_feed_state", "state_key"]

FeedState = dict[tuple[str, str], FeedEntryState]  # (namespace, entry id) -> latest


def state_key(namespace: str, entry_id: str) -> bytes:
    """The compaction key: one live record per (namespace, feed entry)."""
    return f"{namespace}/{entry_id}".encode()


@dataclass(frozen=True)
class Publication:
    """A Document and the state record published with it."""

    document: Document
    state: FeedEntryState


async def read_feed_state(kafka: KafkaSettings) -> FeedState:
    """Every committed feed-state record, latest per (namespace, entry id)."""
    topic = topic_name(TopicName.FEED_STATE, kafka.topic_prefix)
    consumer = AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers,
        isolation_level="read_committed",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    state: FeedState = {}
    try:
        parts = [TopicPartition(topic, p) for p in await topic_partitions(kafka, topic)]
        consumer.assign(parts)
        ends = await consumer.end_offsets(parts)
        await consumer.seek_to_beginning(*parts)
        # Transaction markers occupy offsets but are never returned, so compare positions.
        while [tp for tp in parts if await consumer.position(tp) < ends[tp]]:
            for records in (await consumer.getmany(timeout_ms=1000)).values():
                for record in records:
                    _apply(state, record.key, record.value)
    finally:
        await consumer.stop()
    return state


def _apply(state: FeedState, key: bytes | None, value: bytes | None) -> None:
    if value is None:  # a tombstone forgets the entry
        namespace, _, entry_id = (key or b"").decode().partition("/")
        state.pop((namespace, entry_id), None)
        return
    entry = FeedEntryState.from_bytes(value)
    state[(entry.namespace, entry.entry_id)] = entry


class FeedPublisher:
    """Publishes Documents together with their feed-state records, transactionally."""

    def __init__(self, kafka: KafkaSettings, client_id: str) -> None:
        # Fixed per deployment: a restarted poller fences one that still runs.
        self._sender = TransactionalProducer(kafka, client_id, f"{kafka.topic_prefix}{client_id}")

    async def start(self) -> None:
        await self._sender.start()

    async def stop(self) -> None:
        await self._sender.stop()

    async def publish(self, publications: Sequence[Publication]) -> None:
        """All documents (keyed by namespace) and their state records, in one transaction."""
        if not publications:
            return
        records: list[Outgoing] = []
        for item in publications:
            doc, entry = item.document, item.state
            records.append((TopicName.DOCUMENTS, doc.namespace.encode(), doc))
            records.append(
                (TopicName.FEED_STATE, state_key(entry.namespace, entry.entry_id), entry)
            )
        await self._sender.send_atomically(records)
