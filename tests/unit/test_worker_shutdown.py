"""The worker's exit status at shutdown (factstream.agents.worker._Worker).

faust's fetcher, cancelled at a rebalance, leaves a CancelledError as the crash reason of
every service up to the worker; mode raises it again after closing the loop, so a worker
stopped after a rebalance exited with status 1. These tests set the reason the way the
fetcher does and run the worker's shutdown as mode does after a stop.
"""

from __future__ import annotations

import asyncio

import pytest

from factstream.agents.worker import _Worker
from factstream.config import Settings
from factstream.streams.app import create_app


def _worker() -> _Worker:
    settings = Settings.from_env({"FACTSTREAM_WORKER_APP_ID": "unit-shutdown"})
    loop = asyncio.new_event_loop()
    return _Worker(create_app(settings.kafka, settings.worker), loop=loop, loglevel="warning")


def _crash_as_the_fetcher_does(worker: _Worker, reason: BaseException) -> None:
    # Service.crash of a service without supervisor: _crash on every node up to the root.
    worker._crash(reason)


def test_the_fetchers_cancellation_at_a_rebalance_does_not_fail_the_exit() -> None:
    worker = _worker()
    _crash_as_the_fetcher_does(worker, asyncio.CancelledError())
    worker._shutdown_loop()  # mode's Worker raised the CancelledError here: exit status 1
    assert worker.loop.is_closed()
    assert worker.crash_reason is None


def test_a_real_crash_still_fails_the_exit() -> None:
    worker = _worker()
    _crash_as_the_fetcher_does(worker, RuntimeError("broken"))
    with pytest.raises(RuntimeError, match="broken"):
        worker._shutdown_loop()
    assert worker.loop.is_closed()
