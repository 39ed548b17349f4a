"""faust's delivery of a partition never committed, across a rebalance that begins while the
previous one's seek is under way (issue 25's eighth group run), on real Kafka.

Two workers of the product's faust app (streams/app.py) with probe actors that only log
what their streams yield (tests/fixtures/order_probe.py). The first worker's seek after its
first assignment is slowed and its revocation takes as long as a commit being written (the
hold); the second joins meanwhile, so the first worker's recovery ends in the middle of the
next rebalance. Before the fix that recovery resumed the flow there; the next one sought with
the flow running, and faust's read offsets then dropped a partition's first records: its
actor's first record was a later one, and the group committed past the ones before.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import BinaryIO

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from factstream.config import Settings
from factstream.streams.admin import delete_topics, ensure_topics
from factstream.topics.definitions import TopicName, topic_name

_PROBE = Path(__file__).parents[1] / "fixtures" / "order_probe.py"
_PARTITIONS = 4
_BEFORE, _DURING = 30, 10  # records per partition before the workers start, and meanwhile
_DELIVER = re.compile(r"deliver (\d+) (\d+) (\d+)")
# The first worker: its seeks after a rebalance last 12 s more (the second worker joins
# within them), a revocation holds 10 s (the seek ends within it), its actors start reading
# after 35 s, once the second seek has ended (the editor builds its clients first; this keeps
# what faust hands over in their queues); records are handed over at 5 a second.
_SLOW = {
    "PROBE_SEEK_DELAY_S": "12",
    "PROBE_HOLD_S": "10",
    "PROBE_START_S": "35",
    "PROBE_DELIVER_S": "0.2",
    "PROBE_ACK_S": "0.02",
}


class _Workers:
    def __init__(self, env: dict[str, str], tmp: Path) -> None:
        self.env, self.tmp = env, tmp
        self.procs: list[subprocess.Popen[bytes]] = []
        self._logs: list[BinaryIO] = []

    def start(self, **env: str) -> Path:
        log = self.tmp / f"probe-{len(self.procs)}.log"
        self._logs.append(log.open("wb"))
        self.procs.append(
            subprocess.Popen(
                [sys.executable, str(_PROBE), "worker"],
                env={**os.environ, **self.env, **env},
                stdout=self._logs[-1],
                stderr=subprocess.STDOUT,
            )
        )
        return log

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for log in self._logs:
            log.close()

    def delivered(self) -> dict[int, set[int]]:
        """Offsets each partition's actors were given, in all workers."""
        given: dict[int, set[int]] = defaultdict(set)
        for log in self.tmp.glob("probe-*.log"):
            for _, partition, offset in _DELIVER.findall(log.read_text(errors="replace")):
                given[int(partition)].add(int(offset))
        return given


async def _committed(settings: Settings, topic: str) -> dict[int, int | None]:
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.kafka.bootstrap_servers,
        group_id=settings.worker.app_id,
        enable_auto_commit=False,
    )
    await consumer.start()
    try:
        return {p: await consumer.committed(TopicPartition(topic, p)) for p in range(_PARTITIONS)}
    finally:
        await consumer.stop()


async def _wait_for(check: Callable[[], Awaitable[bool]], what: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if await check():
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


async def test_no_record_is_lost_when_a_rebalance_overtakes_the_seek_of_the_one_before(
    kafka_settings: Settings, tmp_path: Path
) -> None:
    tag = uuid.uuid4().hex[:10]
    env = {
        "FACTSTREAM_KAFKA_BOOTSTRAP_SERVERS": kafka_settings.kafka.bootstrap_servers,
        "FACTSTREAM_KAFKA_TOPIC_PREFIX": f"it{tag}.",
        "FACTSTREAM_WORKER_APP_ID": f"it{tag}",
        "FACTSTREAM_WORKER_PARTITIONS": str(_PARTITIONS),
        "FACTSTREAM_WORKER_SESSION_TIMEOUT_S": "6",
    }
    settings = Settings.from_env(env)
    await ensure_topics(settings.kafka, settings.worker)
    topic = topic_name(TopicName.DOCUMENTS, settings.kafka.topic_prefix)
    producer = AIOKafkaProducer(bootstrap_servers=settings.kafka.bootstrap_servers)
    await producer.start()
    workers = _Workers(env, tmp_path)
    try:
        for i in range(_BEFORE * _PARTITIONS):  # not transactional: offsets without gaps
            await producer.send_and_wait(topic, b"r%d" % i, partition=i % _PARTITIONS)
        first = workers.start(**_SLOW)

        async def seeking() -> bool:
            return "seek after the rebalance" in first.read_text(errors="replace")

        await _wait_for(seeking, "the first worker's seek", 60)
        workers.start()  # joins while that seek is under way
        for i in range(_DURING * _PARTITIONS):
            await producer.send_and_wait(topic, b"s%d" % i, partition=i % _PARTITIONS)
            await asyncio.sleep(0.2)
        total = _BEFORE + _DURING

        async def committed_all() -> bool:
            return all(c == total for c in (await _committed(settings, topic)).values())

        await _wait_for(committed_all, "every record committed", 120)
    finally:
        workers.stop()
        await producer.stop()
    try:
        log = first.read_text(errors="replace")
        # The scenario happened: the first recovery ended while the next rebalance ran
        # (between the revocation and the new generation's join).
        second = [m.end() for m in re.finditer("Revoking previously assigned", log)][1]
        joined = log.index("(generation 2)")
        assert "Resuming flow" in log[second:joined], "the rebalance did not overtake the seek"
        given = workers.delivered()
        committed = await _committed(settings, topic)
        assert set(committed.values()) == {total}
        # Offsets committed that no actor was given, by partition (before the fix: the first
        # ones of the partitions the first worker kept).
        lost = {p: sorted(set(range(total)) - given[p]) for p in committed}
        lost = {p: offsets for p, offsets in lost.items() if offsets}
        assert not lost, f"offsets committed that no actor was given, by partition: {lost}"
    finally:
        await delete_topics(settings.kafka)
