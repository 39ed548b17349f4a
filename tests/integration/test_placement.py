"""The namespace placement map on real Kafka: a mapped namespace's documents land on its
partition through factstream's publisher (the one the ingest CLI, the API and the
evaluations use), unmapped ones where their key hashes; the planner keeps what is placed,
and ``--move`` holds back namespaces whose partition still has unread documents."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from fixtures.factories import UniqueName
from typer.testing import CliRunner

from factstream.cli import app
from factstream.config import KafkaSettings, Settings, WorkerSettings
from factstream.placement.propose import propose
from factstream.streams.admin import ensure_topics
from factstream.streams.browse import assigned_reader
from factstream.streams.changelog import ChangelogPublisher
from factstream.streams.placement import Placement, partition_of
from factstream.topics.definitions import TopicName, topic_name
from factstream.topics.records import Document

PARTS = 6
MAPPED = "desk-a"
TARGET = (partition_of(MAPPED, PARTS) + 3) % PARTS  # never where hashing puts it


def _docs(namespace: str, count: int) -> list[Document]:
    return [
        Document(
            id=f"{namespace}-{i}",
            namespace=namespace,
            kind="article",
            timestamp=datetime(2026, 1, 1, i, tzinfo=UTC),
            text=f"document {i} of {namespace}",
        )
        for i in range(count)
    ]


async def _topics(kafka: KafkaSettings) -> list[str]:
    return await ensure_topics(kafka, WorkerSettings(partitions=PARTS))


async def _drop(kafka: KafkaSettings, topics: list[str]) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers)
    await admin.start()
    try:
        await admin.delete_topics(topics)
    finally:
        await admin.close()


async def _partitions_of(kafka: KafkaSettings) -> dict[str, set[int]]:
    """Per key: the partitions its records are on, read back from the topic."""
    found: dict[str, set[int]] = defaultdict(set)
    topic = topic_name(TopicName.DOCUMENTS, kafka.topic_prefix)
    async with assigned_reader(kafka, topic) as (consumer, parts):
        ends = await consumer.end_offsets(parts)
        await consumer.seek_to_beginning(*parts)
        for tp in parts:
            while await consumer.position(tp) < ends[tp]:
                batch = await consumer.getmany(tp, timeout_ms=1000)
                for record in batch.get(tp, []):
                    found[record.key.decode()].add(tp.partition)
    return found


async def _read_to_the_end(kafka: KafkaSettings, group: str) -> None:
    """Commit the documents topic's end offsets for ``group``, as a worker that read it all."""
    topic = topic_name(TopicName.DOCUMENTS, kafka.topic_prefix)
    consumer = AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers, group_id=group, enable_auto_commit=False
    )
    await consumer.start()
    try:
        parts = [TopicPartition(topic, p) for p in range(PARTS)]
        consumer.assign(parts)
        ends = await consumer.end_offsets(parts)
        await consumer.commit({tp: end for tp, end in ends.items()})
    finally:
        await consumer.stop()


@pytest.fixture
async def kafka(
    kafka_settings: Settings, unique_name: UniqueName, tmp_path: Path
) -> AsyncIterator[KafkaSettings]:
    path = tmp_path / "placement.json"
    Placement({MAPPED: TARGET}, PARTS).save(path)
    kafka = KafkaSettings(
        bootstrap_servers=kafka_settings.kafka.bootstrap_servers,
        topic_prefix=unique_name("t") + ".",
        placement_file=path,
    )
    created = await _topics(kafka)
    yield kafka
    await _drop(kafka, created)


async def test_a_mapped_namespace_lands_on_its_partition(kafka: KafkaSettings) -> None:
    publisher = ChangelogPublisher(kafka)
    await publisher.start()
    try:
        await publisher.publish_documents([*_docs(MAPPED, 3), *_docs("desk-b", 2)])
    finally:
        await publisher.stop()
    assert await _partitions_of(kafka) == {
        MAPPED: {TARGET},
        "desk-b": {partition_of("desk-b", PARTS)},
    }

    # The planner keeps both where they are; a new namespace goes to an empty partition.
    volume = kafka.placement_file.with_name("volume.json")  # type: ignore[union-attr]
    volume.write_text(json.dumps({"desk-new": 4}))
    worker = WorkerSettings(app_id="placement-test-group", partitions=PARTS)
    kept = await propose(kafka, worker, source="documents", volume_file=volume)
    mapping = kept.plan.placement.namespaces
    assert mapping[MAPPED] == TARGET and mapping["desk-b"] == partition_of("desk-b", PARTS)
    assert mapping["desk-new"] not in (TARGET, partition_of("desk-b", PARTS))
    assert (kept.plan.kept, kept.plan.placed, kept.held) == (2, 1, 0)
    assert kept.plan.before[TARGET] == 3

    # --move: no worker of the group read anything, so both namespaces are held back.
    moved = await propose(kafka, worker, source="documents", move=True)
    assert moved.held == 2
    assert moved.plan.placement.namespaces[MAPPED] == TARGET

    # Once the group has read every partition to the end, --move may place them anew.
    await _read_to_the_end(kafka, worker.app_id)
    free = await propose(kafka, worker, source="documents", move=True)
    assert (free.held, free.plan.kept, free.plan.placed) == (0, 0, 2)
    assert free.plan.after.count(0) == PARTS - 2  # the busiest first, each on its own


def test_the_plan_command_writes_a_map_and_show_reads_it(
    kafka_settings: Settings, unique_name: UniqueName, tmp_path: Path
) -> None:
    path = tmp_path / "placement.json"
    kafka = KafkaSettings(
        bootstrap_servers=kafka_settings.kafka.bootstrap_servers,
        topic_prefix=unique_name("t") + ".",
    )
    created = asyncio.run(_topics(kafka))
    try:
        volume = tmp_path / "volume.json"
        volume.write_text(json.dumps({f"n{i}": 10 for i in range(PARTS)}))
        env = {
            "FACTSTREAM_KAFKA_BOOTSTRAP_SERVERS": kafka.bootstrap_servers,
            "FACTSTREAM_KAFKA_TOPIC_PREFIX": kafka.topic_prefix,
            "FACTSTREAM_KAFKA_PLACEMENT_FILE": str(path),
        }
        runner = CliRunner()
        planned = runner.invoke(app, ["placement", "plan", "--volume", str(volume)], env=env)
        assert planned.exit_code == 0, planned.output
        placement = Placement.load(path)
        assert sorted(placement.namespaces.values()) == list(range(PARTS))  # one each
        shown = runner.invoke(app, ["placement", "show", "n0", "other"], env=env)
        assert shown.exit_code == 0, shown.output
        assert f"n0\t{placement.namespaces['n0']}\tmapped" in shown.output
        assert f"other\t{partition_of('other', PARTS)}\thashed" in shown.output
    finally:
        asyncio.run(_drop(kafka, created))
