"""The consumer's seek after a rebalance (streams/app.py): partitions with nothing committed
go back to their first offset (issue 25: aiokafka seeks only offsets above 0), and the flow
resumes only after a seek made since the latest revocation (issue 25's eighth group run)."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

import pytest
from aiokafka import TopicPartition
from aiokafka.consumer.fetcher import OffsetResetStrategy
from aiokafka.consumer.subscription_state import Assignment
from faust.transport.consumer import Consumer
from faust.transport.drivers.aiokafka import AIOKafkaConsumerThread

from factstream.streams.app import SeekingConsumer, _SeekingThread


class _FakeConsumer:
    def __init__(self, committed: dict[TopicPartition, int | None]) -> None:
        self.committed, self.to_beginning = committed, list[TopicPartition]()

    async def seek_to_committed(self) -> dict[TopicPartition, int | None]:
        return self.committed

    async def seek_to_beginning(self, *partitions: TopicPartition) -> bool:
        self.to_beginning.extend(partitions)
        return True


def _thread(consumer: _FakeConsumer) -> Any:
    thread: Any = object.__new__(_SeekingThread)  # no faust service: only the seek
    thread._consumer = consumer
    return thread


async def test_partitions_never_committed_go_back_to_their_first_offset() -> None:
    fresh, zero, later = (TopicPartition("docs", p) for p in range(3))
    consumer = _FakeConsumer({fresh: None, zero: 0, later: 17})
    committed = await _thread(consumer)._seek_to_committed()
    assert committed == consumer.committed  # faust reads its read offsets from them
    assert sorted(consumer.to_beginning) == [fresh, zero]  # 17: aiokafka sought it


async def test_nothing_sought_back_when_every_partition_has_a_commit() -> None:
    consumer = _FakeConsumer({TopicPartition("docs", 0): 3})
    await _thread(consumer)._seek_to_committed()
    assert consumer.to_beginning == []


async def test_the_livelock_check_skips_a_partition_whose_position_is_being_reset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tp = TopicPartition("docs", 0)
    state = Assignment({tp}).state_value(tp)
    state.seek(12)  # fetched before faust sought it back to its first offset
    state.await_reset(OffsetResetStrategy.EARLIEST)

    def verify(self: Any, now: float, tp: TopicPartition) -> None:  # faust's, in short
        assert state.position >= 0  # aiokafka: "assert self._position is not None"

    monkeypatch.setattr(AIOKafkaConsumerThread, "verify_event_path", verify)
    with pytest.raises(AssertionError):
        verify(None, 0.0, tp)
    _thread(_FakeConsumer({})).verify_event_path(0.0, tp)  # skipped, not raised


class _Seeks:
    """The consumer's seek after a rebalance, held open until ``done`` is set."""

    def __init__(self) -> None:
        self.began, self.done = asyncio.Event(), asyncio.Event()

    async def __call__(self) -> dict[TopicPartition, int | None]:
        self.began.set()
        await self.done.wait()
        return {}


@pytest.fixture
def consumer(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The app's consumer with only its flow and seek state (no faust service, no thread),
    its revocation reduced to the count (faust's own steps need the running app)."""

    async def revoked(self: Any, revoked: set[TopicPartition]) -> None:
        return None

    monkeypatch.setattr(Consumer, "on_partitions_revoked", revoked)
    consumer: Any = object.__new__(SeekingConsumer)
    consumer.can_resume_flow, consumer.suspend_flow = asyncio.Event(), asyncio.Event()
    consumer.flow_active = True  # faust's initial state
    consumer._read_offset = defaultdict(lambda: None)
    consumer._committed_offset = defaultdict(lambda: None)
    return consumer


async def _recovery(consumer: Any, seeks: _Seeks) -> None:
    """faust's recovery after an assignment (Recovery._resume_streams): seek, then resume."""
    await consumer.perform_seek()
    consumer.resume_flow()


async def test_the_flow_resumes_after_a_seek_made_since_the_revocation(consumer: Any) -> None:
    seeks = _Seeks()
    consumer.seek_to_committed = seeks
    await consumer.on_partitions_revoked(set())
    consumer.stop_flow()
    seeks.done.set()
    await _recovery(consumer, seeks)
    assert consumer.flow_active


async def test_a_recovery_overtaken_by_a_revocation_does_not_resume_the_flow(
    consumer: Any,
) -> None:
    seeks = _Seeks()
    consumer.seek_to_committed = seeks
    await consumer.on_partitions_revoked(set())
    recovery = asyncio.create_task(_recovery(consumer, seeks))
    await seeks.began.wait()
    assert not consumer.flow_active  # nothing is handed over while partitions are sought
    await consumer.on_partitions_revoked({TopicPartition("docs", 7)})  # the next rebalance
    consumer.stop_flow()  # as faust's revocation does
    seeks.done.set()  # the seek ends in the middle of that rebalance
    await recovery
    assert not consumer.flow_active  # issue 25's eighth group run: it was resumed here
    seeks.began.clear()
    await _recovery(consumer, seeks)  # the next assignment's recovery
    assert consumer.flow_active


async def test_a_seek_of_the_fetcher_still_running_does_not_hold_the_resume_back(
    consumer: Any,
) -> None:
    fetchers, recoverys = _Seeks(), _Seeks()
    await consumer.on_partitions_revoked(set())
    consumer.stop_flow()
    consumer.seek_to_committed = fetchers  # faust's getmany, a fetch back while stopped
    fetcher = asyncio.create_task(consumer.perform_seek())
    await fetchers.began.wait()
    consumer.seek_to_committed = recoverys
    recoverys.done.set()
    await _recovery(consumer, recoverys)
    assert consumer.flow_active  # not stopped until the next rebalance
    fetchers.done.set()
    await fetcher
