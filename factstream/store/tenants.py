"""New namespaces' tenants created together: one request per collection for many namespaces.

Creating a tenant costs a round trip per collection; a worker meeting thousands of new
namespaces (one per conversation) paid two per namespace, in turn, on each one's first write.
Here a namespace is *expected* as soon as its document is read ahead (before its turn), and
everything expected or ensured meanwhile is created in one request per collection (at most
``chunk`` names each), the collections at once. A writer that needs its tenant awaits the
request that carries it. Known tenants are remembered in a bounded set (store/recent.py): a
namespace forgotten is only created again, which Weaviate answers as a no-op.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from factstream.store.recent import RecentSet

__all__ = ["TenantCreator"]


class TenantCreator:
    """Creates tenants in batches through ``create`` (names -> both collections' tenants)."""

    def __init__(
        self,
        create: Callable[[list[str]], Awaitable[None]],
        known: RecentSet,
        chunk: int = 100,
    ) -> None:
        if chunk < 1:
            raise ValueError("chunk must be at least 1")
        self._create, self.known, self._chunk = create, known, chunk
        self._waiting: dict[str, asyncio.Future[None]] = {}  # not yet sent
        self._sending: dict[str, asyncio.Future[None]] = {}  # in a request now
        self._flusher: asyncio.Task[None] | None = None
        self.requests = 0  # create requests made (each for up to ``chunk`` names)

    def expect(self, namespace: str) -> None:
        """Create the namespace's tenant soon, with whatever else is expected meanwhile."""
        if namespace not in self.known:
            self._future(namespace)

    async def ensure(self, namespace: str) -> None:
        """Return once the namespace's tenant exists (known, or created now).

        Raises:
            StoreError: the request carrying it failed (the next call tries again).
        """
        if namespace in self.known:
            return
        await asyncio.shield(self._future(namespace))

    def forget(self, namespace: str) -> None:
        """The tenant was removed: create it again when next needed."""
        self.known.discard(namespace)

    async def aclose(self) -> None:
        """Stop sending; callers still waiting see the cancellation."""
        if self._flusher is not None:
            self._flusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._flusher
        for pending in (*self._waiting.values(), *self._sending.values()):
            pending.cancel()
        self._waiting.clear()
        self._sending.clear()

    def __len__(self) -> int:
        """Namespaces waiting for or in a request (bounded by the documents read ahead)."""
        return len(self._waiting) + len(self._sending)

    def _future(self, namespace: str) -> asyncio.Future[None]:
        pending = self._sending.get(namespace) or self._waiting.get(namespace)
        if pending is not None:
            return pending
        pending = asyncio.get_running_loop().create_future()
        # A failure nobody awaits (an expected namespace never written) is not an error.
        pending.add_done_callback(_seen)
        self._waiting[namespace] = pending
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush(), name="create-tenants")
        return pending

    async def _flush(self) -> None:
        await asyncio.sleep(0)  # what is asked in the same turn of the loop joins
        while self._waiting:
            names = list(self._waiting)[: self._chunk]
            self._sending = {name: self._waiting.pop(name) for name in names}
            self.requests += 1
            try:
                await self._create(names)
            except Exception as exc:  # noqa: BLE001 - handed to each waiter
                for pending in self._sending.values():
                    if not pending.done():
                        pending.set_exception(exc)
            else:
                for name, pending in self._sending.items():
                    self.known.add(name)
                    if not pending.done():
                        pending.set_result(None)
            finally:
                self._sending = {}


def _seen(pending: asyncio.Future[None]) -> None:
    if not pending.cancelled():
        pending.exception()
