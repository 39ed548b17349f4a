"""One transactional Kafka producer shared by concurrent callers: one transaction at a time."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

from aiokafka import AIOKafkaProducer

from factstream.config import KafkaSettings
from factstream.streams.placement import Placement
from factstream.tally import Tally, current
from factstream.topics.definitions import TopicName, topic_name
from factstream.topics.records import Record

__all__ = ["Headers", "Outgoing", "TransactionalProducer"]

Outgoing = tuple[TopicName, bytes | None, Record]  # topic, key, record
Headers = list[tuple[str, bytes]]


class TransactionalProducer:
    """Sends groups of records atomically (readers use read_committed).

    Args:
        kafka: the cluster and the topic prefix.
        client_id: the Kafka client id.
        transactional_id: fixed to fence a predecessor, or unique per process to never
            wait on one; the caller decides.

    Documents go to the partition the namespace placement map gives their namespace
    (``FACTSTREAM_KAFKA_PLACEMENT_FILE``, read here once), others by their key's hash.
    """

    def __init__(self, kafka: KafkaSettings, client_id: str, transactional_id: str) -> None:
        self._prefix = kafka.topic_prefix
        self._placement = Placement.load(kafka.placement_file)  # before any connection
        self.producer = AIOKafkaProducer(
            bootstrap_servers=kafka.bootstrap_servers,
            client_id=client_id,
            transactional_id=transactional_id,
            enable_idempotence=True,
            acks="all",
        )
        # A producer has one open transaction at a time; its callers run concurrently.
        self._lock = asyncio.Lock()
        # The tally of the transaction under way (factstream/tally.py): the requests to the
        # brokers go out from aiokafka's own tasks, so they are counted here, by the client.
        self._tally: Tally | None = None
        client: Any = getattr(self.producer, "client", None)  # a test's double may have none
        if client is not None:
            # The class's method looked up at each call, so a patch of the class (the
            # benchmarks' request counters, bench/counting.py) still sees these requests.
            kind = type(client)

            async def send(*args: Any, **kwargs: Any) -> Any:
                if self._tally is not None:
                    self._tally["kafka"] += 1
                return await kind.send(client, *args, **kwargs)

            client.send = send

    async def start(self) -> None:
        """Start, and wait until the broker gave this transactional id its producer epoch:
        from then on a predecessor with the same id is fenced (its open transaction aborted,
        its next send refused)."""
        await self.producer.start()
        txn_manager: Any = self.producer._txn_manager  # aiokafka has no public wait for it
        await txn_manager.wait_for_pid()

    @contextlib.asynccontextmanager
    async def _counted(self) -> AsyncIterator[None]:
        """While the lock is held: the requests sent count to the caller's tally."""
        self._tally = current()
        try:
            yield
        finally:
            self._tally = None

    async def stop(self) -> None:
        await self.producer.stop()

    async def send_atomically(self, records: Sequence[Outgoing]) -> None:
        """All ``records`` in one transaction, in order."""
        async with self._lock, self._counted(), self.producer.transaction():
            for name, key, record in records:
                topic = topic_name(name, self._prefix)
                partition = None
                if name is TopicName.DOCUMENTS:
                    partition = await self._placement.for_send(self.producer, topic, key)
                await self.producer.send(topic, record.to_bytes(), key=key, partition=partition)

    async def send_bytes_atomically(
        self, name: TopicName, records: Sequence[tuple[bytes | None, bytes, Headers]]
    ) -> None:
        """Records given as their bytes (key, value, headers) in one transaction, in order:
        a record sent again exactly as it first came (a dead letter replayed)."""
        topic = topic_name(name, self._prefix)
        async with self._lock, self._counted(), self.producer.transaction():
            for key, value, headers in records:
                partition = None
                if name is TopicName.DOCUMENTS:
                    partition = await self._placement.for_send(self.producer, topic, key)
                await self.producer.send(
                    topic, value, key=key, partition=partition, headers=headers
                )
