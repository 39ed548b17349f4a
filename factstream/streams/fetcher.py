"""faust's Fetcher without the false crash at each rebalance.

At a rebalance faust stops its fetcher (``App._stop_fetcher``) and, once the partitions
are assigned, the recovery starts it again (``Recovery``: ``_fetcher.maybe_start()``). But
the fetcher task, cancelled while the app is rebalancing, also "crashes to be restarted"
(faust.transport.consumer.Fetcher._fetcher): having no supervisor, it marks every service
from itself up to the worker crashed with that CancelledError, and then fails on the
missing supervisor. The worker goes on, but its consumer and app now report
``should_stop``, so their timers (the periodic offset commit among them) end at their
next tick, and mode raises the CancelledError again when the worker stops: a worker
SIGTERMed after any rebalance exited with status 1 (issue 25's group test).

``RestartableFetcher`` ends quietly when cancelled; the recovery restarts it as before.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

import faust
from faust.transport.consumer import Fetcher
from mode import Service

__all__ = ["RestartableFetcher", "use_restartable_fetcher"]


class RestartableFetcher(Fetcher):
    """Fetches like faust's; a cancellation (a rebalance or a stop) is no crash."""

    @Service.task
    async def _fetcher(self) -> None:
        try:
            consumer: Any = self.app.consumer
            await consumer._drain_messages(self)
        except asyncio.CancelledError:
            pass  # stopped by the rebalance or the worker: recovery or nobody restarts it
        finally:
            self.set_shutdown()


def use_restartable_fetcher(app: faust.App) -> None:
    """Make ``app`` fetch with RestartableFetcher (before the app starts)."""
    # On this app's transport only (a ClassVar of faust's, hence the cast).
    cast("Any", app.transport).Fetcher = RestartableFetcher
