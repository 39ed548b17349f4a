"""The faust-streaming app: at-least-once, one actor per input partition, raw bytes in.

Known faust-streaming limits shape this (docs/design.md section 12): exactly-once mode
duplicates on rebalance and ``concurrency > 1`` breaks per-key order, so the app runs
at-least-once with one actor per partition (``isolated_partitions``), and the editor makes
effects idempotent.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import faust
from faust.transport.drivers.aiokafka import AIOKafkaConsumerThread
from faust.transport.drivers.aiokafka import Consumer as AIOKafkaDriverConsumer
from faust.transport.drivers.aiokafka import Transport as AIOKafkaTransport
from faust.types import TP

from factstream.config import KafkaSettings, WorkerSettings
from factstream.topics.definitions import TopicName, topic_name

__all__ = ["FactstreamApp", "SeekingConsumer", "create_app", "documents_topic"]

log = logging.getLogger(__name__)


class _SeekingThread(AIOKafkaConsumerThread):
    """faust's aiokafka consumer thread, sought back to the start of partitions never
    committed.

    After every rebalance faust seeks each assigned partition to its committed offset, but
    aiokafka's ``seek_to_committed`` seeks only where that offset is above 0: a partition
    with nothing committed keeps its fetch position. faust has meanwhile dropped what it
    had fetched into its streams' buffers (``flow_control.clear()`` at the revocation), so
    those records were never delivered, and the first commit after them (faust commits the
    first run of consecutive acknowledged offsets) moved past them: issue 25's fourth
    full-size group run lost a partition's offsets 0-28, fetched between two rebalances at
    the start. Such a partition now goes back to its first offset (what
    ``auto_offset_reset=earliest`` means); the editor recognises what it had applied.
    """

    async def seek_to_committed(self) -> Mapping[TP, int]:
        result: Mapping[TP, int] = await self.call_thread(self._seek_to_committed)
        return result

    def verify_event_path(self, now: float, tp: TP) -> None:
        """faust's livelock check (every 2.5 commit intervals) reads each partition's
        position, which aiokafka asserts is known; a partition sought back to its first
        offset has none until the fetcher has reset it (``await_reset``): the
        AssertionError crashed the consumer and the worker exited with status 1 (issue
        25's seventh full-size group run, a second after a rebalance; most likely a
        partition never committed, such as the questions topic's there). Such a partition
        has nothing to verify yet."""
        try:
            super().verify_event_path(now, tp)
        except AssertionError:
            log.debug("no event path to verify yet for %s (position being reset)", tp)

    async def _seek_to_committed(self) -> Mapping[TP, int]:  # in the consumer's thread
        consumer = self._ensure_consumer()
        committed: Mapping[TP, int] = await consumer.seek_to_committed()
        fresh = [tp for tp, offset in committed.items() if offset is None or offset <= 0]
        if fresh:
            await consumer.seek_to_beginning(*fresh)
        return committed


class SeekingConsumer(AIOKafkaDriverConsumer):
    """faust's aiokafka consumer, with a ``_SeekingThread``, whose flow (the hand-over of
    fetched records to the actors' queues) resumes only after a seek made since the last
    revocation.

    After each assignment faust's recovery seeks the partitions (``perform_seek``), then
    clears the actors' queues and resumes the flow. A recovery still seeking when the next
    rebalance revokes the partitions went on resuming the flow in the middle of that
    rebalance: the next recovery then sought with the flow running, faust handed records
    over while and after it reset its read offsets, its queue clear dropped them, and the
    fetch from the sought offset dropped every offset below the read offset left behind
    (``_drain_messages``). The actor's first record was a later one; on a partition never
    committed faust commits the first run of acknowledged offsets whatever its start
    (``_new_offset``), so the ones before were lost (issue 25's eighth group run: offsets 0
    and 0-7 of two partitions; tests/integration/test_delivery_order.py). Now the flow stops
    while partitions are sought, and a resume is refused until a seek begun since the latest
    revocation has ended: the overtaken recovery's resume is refused, the next recovery's
    resumes the flow.

    A seek still running does not hold a resume back: faust's fetcher seeks too when a
    fetch returns while the flow is stopped (``getmany``), beside the recovery's seek after
    most rebalances; waiting for it could leave the flow stopped until the next rebalance.
    """

    _revocations = 0  # revocations so far
    _sought = -1  # the revocation count when the latest complete seek began

    def _new_consumer_thread(self) -> AIOKafkaConsumerThread:
        return _SeekingThread(self, loop=self.loop, beacon=self.beacon)

    async def on_partitions_revoked(self, revoked: set[TP]) -> None:
        self._revocations += 1
        await super().on_partitions_revoked(revoked)

    async def perform_seek(self) -> None:
        """Seek every partition to its committed offset with nothing handed over meanwhile."""
        self.stop_flow()
        began = self._revocations
        await super().perform_seek()
        if began == self._revocations:
            self._sought = began

    def resume_flow(self) -> None:
        if self._sought != self._revocations:
            log.info(
                "flow not resumed: the partitions were revoked since they were sought "
                "(the next recovery resumes it)"
            )
            return
        super().resume_flow()


class _Transport(AIOKafkaTransport):
    Consumer = SeekingConsumer


class FactstreamApp(faust.App):
    """faust's app with three changes (issue 25).

    A revocation holds the actors' commits rather than waiting for every event read
    (``_consumer_wait_empty``).

    Its consumer is a ``SeekingConsumer``. And a rebalance that meets it stopping is
    ignored: faust would call ``Consumer.close()``, which marks the aiokafka consumer closed
    and closes its client and coordinator from the app's event loop, not from the consumer
    thread's loop that owns them: the heartbeat task went on in that thread, against a
    closed client ("Heartbeat session expired - marking coordinator dead" ten times a
    second), and the consumer's own stop returned at once since it was marked closed: no
    LeaveGroup, and the worker never exited. The stop under way stops the consumer in its
    own thread, which leaves the group.
    """

    #: Set by the worker: at a revocation, holds its actors' commits (agents/window.py).
    hold_commits: Callable[[], Awaitable[None]] | None = None

    def _new_transport(self) -> _Transport:
        return _Transport(self.conf.broker_consumer, self)

    async def _consumer_wait_empty(self, consumer: Any, logger: Any) -> None:
        """At a revocation faust waits (``stream_wait_empty``) until every event read is
        acknowledged: with the editor's read-ahead, until a window of documents has been
        decided by the LM and committed, tens of seconds during which the whole group waits
        (issue 25's sixth group run). Here the actors' commits are held instead (the one
        writing finishes) and the offsets acknowledged are committed: the rebalance lasts
        about one commit. The signal's stop turns the wait off (agents/stopping.py).
        """
        if not self.conf.stream_wait_empty or self.hold_commits is None:
            await super()._consumer_wait_empty(consumer, logger)
            return
        logger.info("Hold the commits...")
        await self.hold_commits()
        await consumer.commit()

    def _on_rebalance_when_stopped(self) -> None:
        return None


def create_app(kafka: KafkaSettings, worker: WorkerSettings) -> FactstreamApp:
    """A faust app from settings; agents are registered by agents/."""
    # Tables live in memory; faust still makes its data dir (not its parents), so keep it
    # out of the cwd, in a folder that exists.
    datadir = Path(tempfile.gettempdir()) / "factstream-faust"
    datadir.mkdir(exist_ok=True)
    return FactstreamApp(
        worker.app_id,
        broker=[f"kafka://{server.strip()}" for server in kafka.bootstrap_servers.split(",")],
        store="memory://",
        datadir=str(datadir / "{conf.id}-data"),
        autodiscover=False,
        web_enabled=False,
        processing_guarantee="at_least_once",
        topic_partitions=worker.partitions,
        topic_replication_factor=worker.replication,
        broker_session_timeout=worker.session_timeout_s,
        broker_heartbeat_interval=min(3.0, worker.session_timeout_s / 3),
        broker_commit_interval=worker.commit_interval_s,
        consumer_auto_offset_reset="earliest",
    )


def documents_topic(app: faust.App, kafka: KafkaSettings) -> faust.TopicT:
    """The input topic, as raw bytes: decoding is ours, so bad input can be dead-lettered."""
    return app.topic(
        topic_name(TopicName.DOCUMENTS, kafka.topic_prefix),
        key_type=bytes,
        value_type=bytes,
        key_serializer="raw",
        value_serializer="raw",
    )
