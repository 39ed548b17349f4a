"""An editor actor's publisher is stopped however the actor ends
(factstream.agents.worker.Runtime.editor).

faust cancels a revoked partition's actor wherever it waits: while the clients are built,
while its publisher starts (waiting for its producer id, which fences the partition's old
owner), or while the publisher stops. A producer made and never stopped kept its
connections and showed up as aiokafka's "Unclosed AIOKafkaProducer" (issue 25).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from factstream.agents import worker as worker_module
from factstream.agents.worker import Runtime
from factstream.config import Settings


class _Publisher:
    """Records its calls; ``start`` and ``stop`` wait on the given events."""

    made: list[_Publisher] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.started = self.stopped = False
        self.start_gate, self.stop_gate = asyncio.Event(), asyncio.Event()
        self.stop_gate.set()
        _Publisher.made.append(self)

    async def start(self) -> None:
        await self.start_gate.wait()
        self.started = True

    async def stop(self) -> None:
        await self.stop_gate.wait()
        self.stopped = True


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Runtime:
    _Publisher.made = []
    monkeypatch.setattr(worker_module, "ChangelogPublisher", _Publisher)
    monkeypatch.setattr(worker_module, "Editor", lambda *args: object())
    runtime = Runtime(Settings.from_env({"FACTSTREAM_WORKER_APP_ID": "unit-publisher"}))
    built = asyncio.Event()

    async def build() -> object:
        await built.wait()
        return object()

    monkeypatch.setattr(runtime, "_build", build)
    runtime.built = built  # type: ignore[attr-defined]
    return runtime


async def _actor(runtime: Runtime, entered: asyncio.Event) -> None:
    async with runtime.editor(3):
        entered.set()
        await asyncio.Event().wait()  # edits until revoked


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_revoked_while_its_publisher_starts_it_is_stopped(runtime: Runtime) -> None:
    actor = asyncio.create_task(_actor(runtime, asyncio.Event()))
    runtime.built.set()  # type: ignore[attr-defined]
    await _settle()
    (publisher,) = _Publisher.made
    assert not publisher.started  # waiting for its producer id
    actor.cancel()
    await asyncio.gather(actor, return_exceptions=True)
    assert publisher.stopped


async def test_revoked_while_the_clients_are_built_no_publisher_is_made(
    runtime: Runtime,
) -> None:
    actor = asyncio.create_task(_actor(runtime, asyncio.Event()))
    await _settle()
    actor.cancel()
    await asyncio.gather(actor, return_exceptions=True)
    assert _Publisher.made == []


async def test_cancelled_again_while_stopping_the_stop_still_completes(
    runtime: Runtime,
) -> None:
    entered = asyncio.Event()
    actor = asyncio.create_task(_actor(runtime, entered))
    runtime.built.set()  # type: ignore[attr-defined]
    await _settle()
    (publisher,) = _Publisher.made
    publisher.start_gate.set()
    await entered.wait()
    publisher.stop_gate.clear()
    actor.cancel()  # revoked: the actor ends and its publisher stops...
    await _settle()
    actor.cancel()  # ...and the worker shuts down meanwhile
    await asyncio.gather(actor, return_exceptions=True)
    assert not publisher.stopped
    publisher.stop_gate.set()
    await runtime.close()  # waits for the stops under way
    assert publisher.stopped
