"""The fetcher at a rebalance (factstream.streams.fetcher).

faust's fetcher, cancelled while the app rebalances, marked every service up to the worker
crashed with the CancelledError: the consumer's timers (the offset commit) ended and the
worker, stopped later, exited with status 1. These tests cancel the fetcher as faust's
rebalance does, under a parent service standing for the consumer and the worker.
"""

from __future__ import annotations

import asyncio
from typing import Any

from faust.transport.consumer import Fetcher
from mode import Service

from factstream.config import Settings
from factstream.streams.app import create_app
from factstream.streams.fetcher import RestartableFetcher


class _Consumer:
    async def _drain_messages(self, fetcher: Any) -> None:
        await asyncio.Event().wait()  # fetches until cancelled


class _App:
    rebalancing = True  # as between on_rebalance_start and the recovery's end
    consumer = _Consumer()


async def _cancel_at_a_rebalance(fetcher_class: type[Any]) -> Service:
    parent = Service()
    fetcher = fetcher_class(_App(), beacon=parent.beacon)
    task = asyncio.ensure_future(fetcher_class._fetcher(fetcher))
    await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return parent


async def test_a_fetcher_cancelled_at_a_rebalance_crashes_nothing() -> None:
    parent = await _cancel_at_a_rebalance(RestartableFetcher)
    assert not parent.crashed
    assert parent.crash_reason is None


async def test_fausts_own_fetcher_crashes_its_parents_there() -> None:
    # What RestartableFetcher replaces: if a faust upgrade fixes this, drop the class.
    parent = await _cancel_at_a_rebalance(Fetcher)
    assert parent.crashed
    assert isinstance(parent.crash_reason, asyncio.CancelledError)


def test_the_apps_fetch_with_the_restartable_fetcher() -> None:
    settings = Settings.from_env({"FACTSTREAM_WORKER_APP_ID": "unit-fetcher"})
    assert create_app(settings.kafka, settings.worker).transport.Fetcher is RestartableFetcher
