"""The editor actors' stop (agents/stopping.py), and the lag gauge through a rebalance."""

from __future__ import annotations

import asyncio

from factstream.agents.stopping import Actors
from factstream.agents.worker import highwater


async def test_a_stop_cancels_the_actors_running_and_refuses_new_ones() -> None:
    actors = Actors()
    started = asyncio.Event()
    ended: list[str] = []

    async def actor() -> None:
        assert actors.enter()
        try:
            started.set()
            await asyncio.sleep(3600)  # an LM call
        except asyncio.CancelledError:
            ended.append("cancelled")
        finally:
            actors.leave()

    task = asyncio.create_task(actor())
    await started.wait()
    actors.stop()
    await actors.wait(5)
    assert task.done()
    assert ended == ["cancelled"]
    assert not actors.enter()  # an actor started during the stop takes nothing


async def test_waiting_for_no_actor_returns_at_once() -> None:
    actors = Actors()
    actors.stop()
    await asyncio.wait_for(actors.wait(3600), 1)


class _Consumer:
    def __init__(self, assigned: bool) -> None:
        self.assigned = assigned

    def highwater(self, tp: object) -> int:
        assert self.assigned, "Partition is not assigned"  # noqa: S101 - as aiokafka does
        return 42


def test_the_lag_gauge_skips_a_partition_revoked_meanwhile() -> None:
    assert highwater(_Consumer(assigned=True), "tp") == 42
    assert highwater(_Consumer(assigned=False), "tp") is None  # the worker goes on
