"""Consumer lag of a deployment's worker group on the documents topic, read from Kafka:
the end offsets minus the group's committed offsets (all of a partition before any commit).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from bench.harness import Deployment
from factstream.topics.definitions import TopicName

__all__ = ["LagReader"]


class LagReader:
    """Reads the worker group's lag on the documents topic; use as an async context."""

    def __init__(self, dep: Deployment) -> None:
        self._dep = dep
        servers = dep.settings.kafka.bootstrap_servers
        self._admin = AIOKafkaAdminClient(bootstrap_servers=servers)
        self._consumer = AIOKafkaConsumer(bootstrap_servers=servers)
        topic, parts = dep.topic(TopicName.DOCUMENTS), dep.settings.worker.partitions
        self._parts = [TopicPartition(topic, p) for p in range(parts)]

    async def __aenter__(self) -> LagReader:
        await self._admin.start()
        await self._consumer.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._consumer.stop()
        await self._admin.close()

    async def lag(self) -> int:
        """Records published and not yet committed by the group, over all partitions."""
        ends = await self._consumer.end_offsets(self._parts)
        committed = await self._admin.list_consumer_group_offsets(
            self._dep.settings.worker.app_id, partitions=self._parts
        )
        total = 0
        for tp in self._parts:
            meta = committed.get(tp)
            done = meta.offset if meta is not None and meta.offset >= 0 else 0
            total += max(0, ends[tp] - done)
        return total

    async def wait_drained(
        self,
        timeout_s: float,
        interval_s: float = 1.0,
        sample: Callable[[float, int], None] = lambda _t, _lag: None,
    ) -> float:
        """Sample the lag until it is 0; returns the monotonic time it was first seen at 0.

        Raises:
            TimeoutError: still lagging after ``timeout_s``.
        """
        deadline = time.monotonic() + timeout_s
        while True:
            now, lag = time.monotonic(), await self.lag()
            sample(now, lag)
            if lag == 0:
                return now
            if now > deadline:
                raise TimeoutError(f"{lag} documents still queued after {timeout_s:.0f}s")
            self._dep.check_alive()
            await asyncio.sleep(interval_s)
