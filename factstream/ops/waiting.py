"""Wait until a worker has edited documents in: their batch markers are in the store."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Collection, Sequence

from factstream.errors import FactstreamError
from factstream.store.base import FactStore

__all__ = ["WorkerGone", "wait_applied"]


class WorkerGone(FactstreamError):
    """The worker exited while documents were still waiting to be edited in."""


async def wait_applied(
    store: FactStore,
    namespace: str,
    ids: Sequence[str],
    tick: Callable[[int], None],
    timeout_s: float,
    alive: Callable[[], bool] | None = None,
    poll_s: float = 0.5,
    settled: Callable[[], Awaitable[Collection[str]]] | None = None,
    settled_every_s: float = 5.0,
) -> None:
    """Return once every document in ``ids`` is applied; ``tick(n)`` as ``n`` more are.

    ``settled()``, asked every ``settled_every_s`` while some are pending, names documents
    that count as done without being applied (dead-lettered, held for review).

    Raises:
        TimeoutError: some are still pending after ``timeout_s``.
        WorkerGone: ``alive()`` turned false while some were pending.
    """
    deadline, pending = time.monotonic() + timeout_s, list(ids)
    next_settled = time.monotonic() + settled_every_s
    while pending:
        done = [i for i in pending if await store.applied_batch(namespace, i) is not None]
        if not done and settled is not None and time.monotonic() >= next_settled:
            skipped = await settled()
            done = [i for i in pending if i in skipped]
            next_settled = time.monotonic() + settled_every_s
        if done:
            tick(len(done))
            finished = set(done)
            pending = [i for i in pending if i not in finished]
            continue
        if alive is not None and not alive():
            raise WorkerGone(f"the worker exited with {len(pending)} documents not edited in")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(pending)} documents not edited in after {timeout_s:.0f}s")
        await asyncio.sleep(poll_s)
