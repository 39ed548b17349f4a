"""Real Apache Kafka (KRaft): topics, keyed ordering, consumer-group commit and resume."""

from __future__ import annotations

import asyncio
from collections import defaultdict

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord
from aiokafka.admin import AIOKafkaAdminClient
from fixtures.factories import TopicFactory, UniqueName, describe_topic_configs

from factstream.config import Settings


async def _produce(settings: Settings, topic: str, items: list[tuple[bytes, bytes]]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=settings.kafka.bootstrap_servers, acks="all")
    await producer.start()
    try:
        for key, value in items:
            await producer.send(topic, value, key=key)
        await producer.flush()
    finally:
        await producer.stop()


def _consumer(settings: Settings, topic: str, group: str | None) -> AIOKafkaConsumer:
    return AIOKafkaConsumer(
        topic,
        bootstrap_servers=settings.kafka.bootstrap_servers,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=6000,
        heartbeat_interval_ms=1000,
    )


async def _take(consumer: AIOKafkaConsumer, n: int) -> list[ConsumerRecord[bytes, bytes]]:
    got: list[ConsumerRecord[bytes, bytes]] = []
    while len(got) < n:
        got.append(await asyncio.wait_for(consumer.getone(), timeout=30))
    return got


async def test_topic_with_partitions_and_compaction(
    kafka_admin: AIOKafkaAdminClient, topic_factory: TopicFactory
) -> None:
    topic = await topic_factory(partitions=3, configs={"cleanup.policy": "compact"})
    configs = (await describe_topic_configs(kafka_admin, [topic]))[topic]  # waits for the topic
    assert configs["cleanup.policy"] == "compact"
    [described] = await kafka_admin.describe_topics([topic])
    assert len(described["partitions"]) == 3


async def test_keyed_records_keep_their_order_on_one_partition(
    kafka_settings: Settings, topic_factory: TopicFactory
) -> None:
    topic = await topic_factory(partitions=4)
    keys = [f"ns-{i}".encode() for i in range(6)]
    sent = [(keys[i % 6], f"{i % 6}:{i}".encode()) for i in range(120)]
    await _produce(kafka_settings, topic, sent)
    consumer = _consumer(kafka_settings, topic, group=None)
    await consumer.start()
    try:
        records = await _take(consumer, len(sent))
    finally:
        await consumer.stop()
    by_key: dict[bytes, list[bytes]] = defaultdict(list)
    partitions: dict[bytes, set[int]] = defaultdict(set)
    for rec in records:
        assert rec.key is not None and rec.value is not None
        by_key[rec.key].append(rec.value)
        partitions[rec.key].add(rec.partition)
    for key in keys:
        assert by_key[key] == [v for k, v in sent if k == key]
        assert len(partitions[key]) == 1
    assert len({p for ps in partitions.values() for p in ps}) > 1  # keys did spread


async def test_group_resumes_after_its_last_commit(
    kafka_settings: Settings, topic_factory: TopicFactory, unique_name: UniqueName
) -> None:
    topic = await topic_factory(partitions=1)
    group = unique_name("group.")
    await _produce(kafka_settings, topic, [(b"k", str(i).encode()) for i in range(10)])

    first = _consumer(kafka_settings, topic, group)
    await first.start()
    try:
        got = await _take(first, 4)
        await first.commit()
        uncommitted = await _take(first, 3)  # read but never committed: must come again
    finally:
        await first.stop()
    assert [r.value for r in got] == [b"0", b"1", b"2", b"3"]
    assert [r.value for r in uncommitted] == [b"4", b"5", b"6"]

    second = _consumer(kafka_settings, topic, group)
    await second.start()
    try:
        rest = await _take(second, 6)
    finally:
        await second.stop()
    assert [r.value for r in rest] == [str(i).encode() for i in range(4, 10)]
    assert rest[0].offset == 4
