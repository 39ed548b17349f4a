"""Coalescer: concurrent embedding requests merged into one model call.

The worker edits its partitions at once; each document asks for a few vectors (its text, a
fact's rewrite). The model runs in one thread, so those requests queue there anyway; run one
by one, each pays the model's per-call cost (and, with the event loop busy in the other
thread, a wait for the GIL at every layer). While a call runs, new requests wait in the
queue; the next call takes all of them that fit in ``max_texts``, and each request gets its
own slice of the vectors back. A request larger than ``max_texts`` goes alone, whole (the
model batches inside it).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable

from factstream.embed.base import Vector

__all__ = ["Coalescer"]

EncodeFn = Callable[[list[str]], Awaitable[list[Vector]]]


class _Request:
    __slots__ = ("future", "texts")

    def __init__(self, texts: list[str], future: asyncio.Future[list[Vector]]) -> None:
        self.texts = texts
        self.future = future


class Coalescer:
    """Runs ``encode`` on merged requests, in arrival order, at most ``in_flight`` at once.

    With ``in_flight`` 2 and a one-worker process pool, the next call is already in the
    pool's queue while the model computes the current one: the model does not sit idle
    while results travel back and the next call travels in.
    """

    def __init__(self, encode: EncodeFn, max_texts: int, in_flight: int = 1) -> None:
        if max_texts < 1 or in_flight < 1:
            raise ValueError("max_texts and in_flight must be at least 1")
        self._encode = encode
        self._max = max_texts
        self._in_flight = in_flight
        self._queue: deque[_Request] = deque()
        self._running: set[asyncio.Task[None]] = set()
        self.calls = 0  # encode calls made (tests, benchmarks)

    async def submit(self, texts: list[str]) -> list[Vector]:
        """The vectors of ``texts``, in order, computed in some merged call."""
        if not texts:
            return []
        future: asyncio.Future[list[Vector]] = asyncio.get_running_loop().create_future()
        self._queue.append(_Request(texts, future))
        self._pump()
        return await future

    def _pump(self) -> None:
        while self._queue and len(self._running) < self._in_flight:
            taken = self._take()
            if taken:
                task = asyncio.create_task(self._call(taken), name="embed-call")
                self._running.add(task)
                task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._running.discard(task)
        if not task.cancelled():
            self._pump()

    def _take(self) -> list[_Request]:
        taken = [self._queue.popleft()]
        size = len(taken[0].texts)
        while self._queue and size + len(self._queue[0].texts) <= self._max:
            request = self._queue.popleft()
            taken.append(request)
            size += len(request.texts)
        return [r for r in taken if not r.future.done()]  # cancelled callers are dropped

    async def _call(self, taken: list[_Request]) -> None:
        texts = [t for r in taken for t in r.texts]
        self.calls += 1
        try:
            vectors = await self._encode(texts)
            if len(vectors) != len(texts):
                raise RuntimeError(f"encode returned {len(vectors)} vectors for {len(texts)}")
        except asyncio.CancelledError:
            for r in taken:
                r.future.cancel()
            raise
        except Exception as exc:  # each waiting caller gets the encoder's error
            for r in taken:
                if not r.future.done():
                    r.future.set_exception(exc)
            return
        start = 0
        for r in taken:
            end = start + len(r.texts)
            if not r.future.done():
                r.future.set_result(vectors[start:end])
            start = end

    async def aclose(self) -> None:
        """Wait for the calls in flight and whatever is queued."""
        while self._running:
            await asyncio.gather(*self._running, return_exceptions=True)
