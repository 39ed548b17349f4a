"""The editor actors' stop (agents/stopping.py): at once, and none taken afterwards."""

from __future__ import annotations

import asyncio

from factstream.agents.stopping import Actors


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
