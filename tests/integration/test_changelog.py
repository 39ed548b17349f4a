"""The changelog on real Kafka: topics as declared, atomic batches, first batch wins."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from fixtures.factories import UniqueName, describe_topic_configs

from factstream.config import KafkaSettings, Settings, WorkerSettings
from factstream.streams.admin import ensure_topics
from factstream.streams.changelog import ChangelogPublisher, first_batches, read_changelog
from factstream.topics.definitions import TOPICS, TopicName, topic_name
from factstream.topics.records import FactEdit, edit_id_for, fact_id_for

T0 = datetime(2024, 5, 1, tzinfo=UTC)


def batch(doc: str, size: int, batch_id: str | None = None) -> list[FactEdit]:
    return [
        FactEdit(
            edit_id=edit_id_for("desk", doc, i),
            namespace="desk",
            fact_id=fact_id_for("desk", doc, i),
            op="add",  # type: ignore[arg-type]
            text=f"fact {i} of {doc}",
            truth=True,
            event_time=T0,
            document_id=doc,
            batch={"id": batch_id or doc, "size": size, "position": i},  # type: ignore[arg-type]
            input={"topic": "docs", "partition": 0, "offset": 1},  # type: ignore[arg-type]
            decided_by={"model": "m", "prompt_version": "extract_facts.v1"},  # type: ignore[arg-type]
            created_at=T0,
        )
        for i in range(size)
    ]


@pytest.fixture
async def kafka(kafka_settings: Settings, unique_name: UniqueName) -> AsyncIterator[KafkaSettings]:
    kafka = KafkaSettings(
        bootstrap_servers=kafka_settings.kafka.bootstrap_servers,
        topic_prefix=unique_name("t") + ".",
    )
    created = await ensure_topics(kafka, WorkerSettings(partitions=3))
    assert len(created) == len(TOPICS)
    yield kafka
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers)
    await admin.start()
    await admin.delete_topics(created)
    await admin.close()


@pytest.fixture
async def publisher(kafka: KafkaSettings) -> AsyncIterator[ChangelogPublisher]:
    pub = ChangelogPublisher(kafka)
    await pub.start()
    yield pub
    await pub.stop()


async def test_topics_are_created_as_declared_and_only_once(kafka: KafkaSettings) -> None:
    assert await ensure_topics(kafka, WorkerSettings(partitions=3)) == []
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers)
    await admin.start()
    try:
        names = {
            n: topic_name(n, kafka.topic_prefix) for n in (TopicName.FACTS, TopicName.DOCUMENTS)
        }
        configs = await describe_topic_configs(admin, list(names.values()))
        [described] = await admin.describe_topics([names[TopicName.FACTS]])
    finally:
        await admin.close()
    assert configs[names[TopicName.FACTS]]["cleanup.policy"] == "compact"
    assert configs[names[TopicName.DOCUMENTS]]["message.timestamp.type"] == "LogAppendTime"
    assert len(described["partitions"]) == 3


async def test_batches_read_back_whole_and_first_batch_wins(
    kafka: KafkaSettings, publisher: ChangelogPublisher
) -> None:
    await publisher.publish_batch(batch("d1", 5))
    await publisher.publish_batch(batch("d2", 2))
    await publisher.publish_batch(batch("d1", 3, batch_id="d1-second"))  # a later batch for d1
    edits = [e async for e in read_changelog(kafka)]
    assert len(edits) == 10
    batches = first_batches(edits)
    assert set(batches) == {("desk", "d1"), ("desk", "d2")}
    assert [e.batch.id for e in batches[("desk", "d1")]] == ["d1"] * 5
    assert [e.batch.position for e in batches[("desk", "d1")]] == [0, 1, 2, 3, 4]


async def test_an_aborted_batch_is_never_read(
    kafka: KafkaSettings, publisher: ChangelogPublisher
) -> None:
    producer = publisher.sender.producer  # the transaction is aborted mid-batch, as by a crash
    topic = topic_name(TopicName.FACT_EDITS, kafka.topic_prefix)
    with pytest.raises(RuntimeError):
        async with producer.transaction():
            for edit in batch("crashed", 3)[:2]:
                await producer.send(topic, edit.to_bytes(), key=edit.fact_id.encode())
            raise RuntimeError("worker died mid-batch")
    await publisher.publish_batch(batch("d3", 1))
    edits = [e async for e in read_changelog(kafka)]
    assert [e.document_id for e in edits] == ["d3"]


async def test_reading_from_a_time_skips_earlier_batches(
    kafka: KafkaSettings, publisher: ChangelogPublisher
) -> None:
    await publisher.publish_batch(batch("old", 2))
    edits = [e async for e in read_changelog(kafka)]
    assert len(edits) == 2
    await asyncio.sleep(0.02)  # the old batch's timestamps are now strictly before the cutoff
    cutoff_ms = int(datetime.now(UTC).timestamp() * 1000)
    await publisher.publish_batch(batch("new", 2))
    later = [e async for e in read_changelog(kafka, since_ms=cutoff_ms)]
    assert {e.document_id for e in later} == {"new"}
