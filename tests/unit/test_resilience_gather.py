"""gather_or_cancel: concurrent awaits whose first failure cancels the rest."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from factstream.resilience import gather_or_cancel


def _slow(cancelled: list[int]) -> Callable[[int], Awaitable[int]]:
    """A call that takes ten seconds and notes in ``cancelled`` when it is cancelled."""

    async def slow(i: int) -> int:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(i)
            raise
        return i

    return slow


async def test_results_come_in_input_order_and_run_at_once() -> None:
    started: list[int] = []

    async def one(i: int, delay: float) -> int:
        started.append(i)
        await asyncio.sleep(delay)
        return i

    loop = asyncio.get_running_loop()
    began = loop.time()
    assert await gather_or_cancel(one(0, 0.2), one(1, 0.1), one(2, 0.0)) == [0, 1, 2]
    assert loop.time() - began < 0.3  # together, not 0.3 s one after another
    assert started == [0, 1, 2]


async def test_the_first_failure_cancels_the_others_before_it_is_raised() -> None:
    cancelled: list[int] = []
    slow = _slow(cancelled)

    async def fails() -> int:
        await asyncio.sleep(0.01)
        raise ValueError("bad output")

    with pytest.raises(ValueError, match="bad output"):
        await gather_or_cancel(slow(0), fails(), slow(2))
    assert sorted(cancelled) == [0, 2]  # ended by the time the error reached the caller


async def test_cancelling_the_caller_cancels_every_await() -> None:
    cancelled: list[int] = []
    slow = _slow(cancelled)

    task = asyncio.create_task(gather_or_cancel(slow(0), slow(1)))
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert sorted(cancelled) == [0, 1]


async def test_nothing_to_await() -> None:
    assert await gather_or_cancel() == []
