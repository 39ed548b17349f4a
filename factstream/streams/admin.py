"""Create factstream's topics as declared in topics/definitions.py (idempotent)."""

from __future__ import annotations

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError

from factstream.config import KafkaSettings, WorkerSettings
from factstream.topics.definitions import TOPICS, TopicName, TopicSpec, topic_name

__all__ = ["ensure_topics", "topic_configs"]


def topic_configs(spec: TopicSpec) -> dict[str, str]:
    """Kafka configs of a topic: the declared policy, plus broker-assigned input timestamps.

    Documents get LogAppendTime: the recovery scan after a crash reads the changelog from
    the moment the first unfinished document was appended, whatever its producer claimed.
    """
    configs = spec.configs()
    if spec.name is TopicName.DOCUMENTS:
        configs["message.timestamp.type"] = "LogAppendTime"
    return configs


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
                topic_configs=topic_configs(spec),
            )
            for spec in TOPICS.values()
            if topic_name(spec.name, kafka.topic_prefix) not in existing
        ]
        created = []
        for new in wanted:  # one by one: a topic another worker just made is not an error
            try:
                await admin.create_topics([new])
                created.append(new.name)
            except TopicAlreadyExistsError:
                pass
        return created
    finally:
        await admin.close()
