"""The consumer thread's seek after a rebalance (streams/app.py): partitions with nothing
committed go back to their first offset (issue 25: aiokafka seeks only offsets above 0)."""

from __future__ import annotations

from typing import Any

import pytest
from aiokafka import TopicPartition
from aiokafka.consumer.fetcher import OffsetResetStrategy
from aiokafka.consumer.subscription_state import Assignment
from faust.transport.drivers.aiokafka import AIOKafkaConsumerThread

from factstream.streams.app import _SeekingThread


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
