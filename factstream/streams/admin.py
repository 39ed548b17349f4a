"""Create factstream's topics as declared in topics/definitions.py (idempotent); delete them."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError, for_code

from factstream.config import KafkaSettings, WorkerSettings
from factstream.topics.definitions import TOPICS, TopicName, TopicSpec, topic_name

__all__ = ["delete_topics", "ensure_topics", "topic_configs", "topic_partitions"]


def topic_configs(spec: TopicSpec) -> dict[str, str]:
    """Kafka configs of a topic: the declared policy, plus broker-assigned input timestamps.

    Documents get LogAppendTime: the recovery scan after a crash reads the changelog from
    the moment the first unfinished document was appended, whatever its producer claimed.
    """
    configs = spec.configs()
    if spec.name is TopicName.DOCUMENTS:
        configs["message.timestamp.type"] = "LogAppendTime"
    return configs


_METADATA_WAIT_S = 10.0


def _created(topic_errors: list[tuple[Any, ...]]) -> list[str]:
    # aiokafka reports per-topic errors in the response instead of raising them.
    created = []
    for topic, code, *message in topic_errors:
        if code == 0:
            created.append(topic)
        elif code != TopicAlreadyExistsError.errno:  # another worker made it just now: fine
            raise for_code(code)(f"cannot create topic {topic}: {message}")
    return created


async def topic_partitions(
    kafka: KafkaSettings, topic: str, wait_s: float = _METADATA_WAIT_S
) -> list[int]:
    """The partition numbers of ``topic``, from the cluster.

    A topic created a moment ago can be described without partitions until the broker's
    metadata has it; that is waited for, up to ``wait_s``.
    """
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers)
    await admin.start()
    try:
        deadline = time.monotonic() + wait_s
        while True:
            [described] = await admin.describe_topics([topic])
            if described["partitions"] or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
    finally:
        await admin.close()
    return sorted(int(p["partition"]) for p in described["partitions"])


async def ensure_topics(kafka: KafkaSettings, worker: WorkerSettings) -> list[str]:
    """Create every missing factstream topic; returns the names created."""
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        wanted = [
            NewTopic(
                topic_name(spec.name, kafka.topic_prefix),
                num_partitions=worker.partitions,
                replication_factor=worker.replication,
                topic_configs={
                    **topic_configs(spec),
                    "min.insync.replicas": str(worker.min_insync_replicas),
                },
            )
            for spec in TOPICS.values()
            if topic_name(spec.name, kafka.topic_prefix) not in existing
        ]
        if not wanted:
            return []
        response = await admin.create_topics(wanted)
        return _created(response.topic_errors)
    finally:
        await admin.close()


async def delete_topics(kafka: KafkaSettings) -> list[str]:
    """Delete every factstream topic under ``kafka.topic_prefix`` that exists (a test's or a
    benchmark's own deployment, when it ends); returns the names deleted."""
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        ours = [topic_name(name, kafka.topic_prefix) for name in TOPICS]
        ours = [topic for topic in ours if topic in existing]
        if ours:
            await admin.delete_topics(ours)
        return ours
    finally:
        await admin.close()
