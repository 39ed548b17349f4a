"""Reads of the topics for people (the web console, ``factstream dlq``): follow the
changelog, read or count a topic's records, fetch one record by its position. All
read_committed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition

from factstream.config import KafkaSettings
from factstream.streams.admin import topic_partitions
from factstream.topics.definitions import TopicName, topic_name
from factstream.topics.records import FactEdit

__all__ = [
    "assigned_reader",
    "committed_records",
    "count_keyed",
    "follow_changelog",
    "record_at",
]


@asynccontextmanager
async def assigned_reader(
    kafka: KafkaSettings, topic: str
) -> AsyncIterator[tuple[AIOKafkaConsumer, list[TopicPartition]]]:
    """A read_committed consumer assigned every partition of ``topic`` (no group, no commits)."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers,
        isolation_level="read_committed",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    try:
        parts = [TopicPartition(topic, p) for p in await topic_partitions(kafka, topic)]
        consumer.assign(parts)
        yield consumer, parts
    finally:
        await consumer.stop()


async def follow_changelog(
    kafka: KafkaSettings, namespace: str, poll_ms: int = 1000
) -> AsyncIterator[list[FactEdit]]:
    """The namespace's edits committed from now on, a list per poll (never ends).

    The first list (empty) comes once reading is positioned at the end; an empty one after
    it means nothing new in ``poll_ms``.
    """
    topic = topic_name(TopicName.FACT_EDITS, kafka.topic_prefix)
    async with assigned_reader(kafka, topic) as (consumer, parts):
        ends: dict[TopicPartition, int] = await consumer.end_offsets(parts)
        for tp in parts:
            consumer.seek(tp, ends[tp])
        yield []
        while True:
            batches = await consumer.getmany(timeout_ms=poll_ms)
            edits = [FactEdit.from_bytes(r.value) for rs in batches.values() for r in rs]
            yield [edit for edit in edits if edit.namespace == namespace]


async def committed_records(
    kafka: KafkaSettings, name: TopicName
) -> AsyncIterator[ConsumerRecord[bytes, bytes]]:
    """Every committed record of topic ``name`` so far, partition by partition, in order."""
    topic = topic_name(name, kafka.topic_prefix)
    async with assigned_reader(kafka, topic) as (consumer, parts):
        ends: dict[TopicPartition, int] = await consumer.end_offsets(parts)
        starts: dict[TopicPartition, int] = await consumer.beginning_offsets(parts)
        for tp in parts:
            if starts[tp] >= ends[tp]:
                continue
            consumer.seek(tp, starts[tp])
            while await consumer.position(tp) < ends[tp]:
                batch = await consumer.getmany(tp, timeout_ms=1000)
                for record in batch.get(tp, []):
                    yield record


async def count_keyed(kafka: KafkaSettings, name: TopicName, key: str) -> int:
    """How many committed records of topic ``name`` carry ``key`` (a namespace), so far."""
    wanted = key.encode()
    return sum([1 async for record in committed_records(kafka, name) if record.key == wanted])


async def record_at(kafka: KafkaSettings, topic: str, partition: int, offset: int) -> bytes | None:
    """The value of the record at ``offset`` (None: gone, or never committed)."""
    async with assigned_reader(kafka, topic) as (consumer, parts):
        tp = TopicPartition(topic, partition)
        if tp not in parts:
            return None
        ends: dict[TopicPartition, int] = await consumer.end_offsets([tp])
        starts: dict[TopicPartition, int] = await consumer.beginning_offsets([tp])
        if not starts[tp] <= offset < ends[tp]:
            return None
        consumer.seek(tp, offset)
        while await consumer.position(tp) < ends[tp]:
            batch = await consumer.getmany(tp, timeout_ms=1000)
            for record in batch.get(tp, []):
                if record.offset == offset:
                    value: bytes | None = record.value
                    return value
                if record.offset > offset:
                    return None
    return None
