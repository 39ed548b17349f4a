"""What the placement planner reads from Kafka: per-namespace volume and where each
namespace's documents lie now, and which documents partitions still have unread documents.

Volume comes from the documents topic (every committed record, by key) or from the changelog
(the distinct documents that made edits, with the partition each was read from: the
changelog's retention is long, the documents topic's may not be).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition

from factstream.config import KafkaSettings
from factstream.streams.browse import assigned_reader
from factstream.streams.changelog import read_changelog
from factstream.topics.definitions import TopicName, topic_name

__all__ = ["Observed", "from_changelog", "from_documents", "unread_partitions"]


@dataclass
class Observed:
    """Documents per namespace, the partition of each one's latest document, and every
    partition each was seen on (more than one if its placement changed)."""

    volume: Counter[str] = field(default_factory=Counter)
    partitions: dict[str, set[int]] = field(default_factory=dict)
    _latest: dict[str, tuple[int, int]] = field(default_factory=dict)  # (ms, partition)

    def add(self, namespace: str, partition: int, at_ms: int) -> None:
        self.volume[namespace] += 1
        self.partitions.setdefault(namespace, set()).add(partition)
        self._latest[namespace] = max(
            self._latest.get(namespace, (at_ms, partition)), (at_ms, partition)
        )

    @property
    def seen_at(self) -> dict[str, int]:
        """Each namespace's partition now: where its latest document went."""
        return {namespace: partition for namespace, (_, partition) in self._latest.items()}


async def _records(
    consumer: AIOKafkaConsumer, tp: TopicPartition, start: int, end: int
) -> AsyncIterator[ConsumerRecord[bytes, bytes]]:
    """The committed records of ``tp`` from ``start`` up to ``end`` (markers skipped)."""
    consumer.seek(tp, start)
    while await consumer.position(tp) < end:
        batch = await consumer.getmany(tp, timeout_ms=1000)
        for record in batch.get(tp, []):
            if record.offset >= end:
                return
            yield record


async def from_documents(kafka: KafkaSettings) -> Observed:
    """Every committed document on the documents topic, counted by its key (namespace)."""
    observed = Observed()
    topic = topic_name(TopicName.DOCUMENTS, kafka.topic_prefix)
    async with assigned_reader(kafka, topic) as (consumer, parts):
        ends: dict[TopicPartition, int] = await consumer.end_offsets(parts)
        starts: dict[TopicPartition, int] = await consumer.beginning_offsets(parts)
        for tp in parts:
            async for record in _records(consumer, tp, starts[tp], ends[tp]):
                if record.key is not None:
                    observed.add(
                        record.key.decode(errors="replace"), tp.partition, record.timestamp
                    )
    return observed


async def from_changelog(kafka: KafkaSettings) -> Observed:
    """The distinct documents that made edits, per namespace, from the changelog."""
    observed, documents = Observed(), set[tuple[str, str]]()
    async for edit in read_changelog(kafka):
        if (edit.namespace, edit.document_id) not in documents:
            documents.add((edit.namespace, edit.document_id))
            observed.add(
                edit.namespace, edit.input.partition, int(edit.created_at.timestamp() * 1000)
            )
    return observed


async def unread_partitions(kafka: KafkaSettings, group: str) -> dict[int, int]:
    """Documents partitions with committed documents the worker group has not read yet:
    partition -> how many (the group's committed offset to the end; commit markers of
    transactional publishers are not documents and are not counted)."""
    topic = topic_name(TopicName.DOCUMENTS, kafka.topic_prefix)
    unread: dict[int, int] = {}
    async with assigned_reader(kafka, topic) as (reader, parts):
        ends: dict[TopicPartition, int] = await reader.end_offsets(parts)
        starts: dict[TopicPartition, int] = await reader.beginning_offsets(parts)
        group_reader = AIOKafkaConsumer(
            bootstrap_servers=kafka.bootstrap_servers, group_id=group, enable_auto_commit=False
        )
        await group_reader.start()
        try:
            committed = {tp: await group_reader.committed(tp) for tp in parts}
        finally:
            await group_reader.stop()
        for tp in parts:
            start = max(committed[tp] or 0, starts[tp])
            count = 0
            async for _record in _records(reader, tp, start, ends[tp]):
                count += 1
            if count:
                unread[tp.partition] = count
    return unread
