"""Documents a worker settled without applying: dead-lettered or held for review.

An evaluation waits until every document it published is edited in; one the worker
dead-lettered (an LM answer still invalid after the retries) or routed to review (over the
blast radius) never will be. Their ids are read back from those two topics, so the run goes
on and reports them.
"""

from __future__ import annotations

import base64

import orjson
from aiokafka import AIOKafkaConsumer, TopicPartition

from factstream.config import KafkaSettings
from factstream.streams.admin import topic_partitions
from factstream.topics.definitions import TopicName, topic_name
from factstream.topics.records import DeadLetter

__all__ = ["document_id_of", "skipped_documents"]


def document_id_of(topic: TopicName, value: bytes) -> str | None:
    """The id of the document a dead letter or a review record holds (None: unreadable)."""
    try:
        if topic is TopicName.DOCUMENTS_DLQ:
            value = base64.b64decode(DeadLetter.from_bytes(value).value)
        found = orjson.loads(value).get("id")
    except (ValueError, AttributeError):
        return None
    return found if isinstance(found, str) else None


async def skipped_documents(kafka: KafkaSettings) -> dict[str, str]:
    """Document id -> ``dead_letter`` or ``review``, for every record now on those topics."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=kafka.bootstrap_servers,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    found: dict[str, str] = {}
    try:
        for name, why in ((TopicName.DOCUMENTS_DLQ, "dead_letter"), (TopicName.REVIEW, "review")):
            topic = topic_name(name, kafka.topic_prefix)
            parts = [TopicPartition(topic, p) for p in await topic_partitions(kafka, topic)]
            if not parts:
                continue
            consumer.assign(parts)
            ends = await consumer.end_offsets(parts)
            await consumer.seek_to_beginning(*parts)
            while [tp for tp in parts if await consumer.position(tp) < ends[tp]]:
                batch = await consumer.getmany(*parts, timeout_ms=1000)
                for records in batch.values():
                    for record in records:
                        doc_id = document_id_of(name, record.value or b"")
                        if doc_id is not None:
                            found[doc_id] = why
    finally:
        await consumer.stop()
    return found
