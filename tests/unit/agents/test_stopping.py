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


class _Commits:
    def __init__(self) -> None:
        self.calls: list[str] = []

    async def hold(self) -> None:
        self.calls.append("hold")

    def resume(self) -> None:
        self.calls.append("resume")


async def test_a_rebalance_holds_every_actor_and_resumes_those_kept() -> None:
    actors = Actors()
    kept, revoked, late = _Commits(), _Commits(), _Commits()
    await actors.enrol(0, kept)
    await actors.enrol(1, revoked)
    await actors.hold()
    await actors.enrol(2, late)  # an actor started during the rebalance is held at once
    actors.resume({0, 2})
    assert kept.calls == ["hold", "resume"]
    assert revoked.calls == ["hold"]  # faust ends its actor
    assert late.calls == ["hold", "resume"]
    actors.leave_partition(1, revoked)
    await actors.hold()
    assert revoked.calls == ["hold"]
