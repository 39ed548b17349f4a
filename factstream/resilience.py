"""Bounded fan-out, exponential back-off, and a circuit breaker that makes callers wait."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

from factstream.errors import FactstreamError

__all__ = [
    "CircuitBreaker",
    "OutageTooLong",
    "backoff_delay",
    "gather_bounded",
    "gather_or_cancel",
]

log = logging.getLogger(__name__)
T = TypeVar("T")


async def gather_bounded(aws: Iterable[Awaitable[T]], limit: int) -> list[T]:
    """Await ``aws`` with at most ``limit`` running at once; results in input order."""
    semaphore = asyncio.Semaphore(limit)

    async def one(aw: Awaitable[T]) -> T:
        async with semaphore:
            return await aw

    return list(await asyncio.gather(*(one(aw) for aw in aws)))


async def gather_or_cancel(*aws: Awaitable[T]) -> list[T]:
    """Await ``aws`` concurrently; results in input order.

    Unlike :func:`asyncio.gather`, the first failure (or a cancellation of the caller)
    cancels the others and waits for them to end before it is raised: nothing started
    here outlives the call, and the caller sees the error it would have seen one at a time.
    """
    tasks = [asyncio.ensure_future(aw) for aw in aws]
    try:
        return list(await asyncio.gather(*tasks))
    finally:
        pending = [task for task in tasks if not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)


def backoff_delay(attempt: int, base_s: float, max_s: float, *, jitter: float = 0.1) -> float:
    """Delay before retry number ``attempt`` (1-based): base * 2**(attempt-1), capped, jittered."""
    delay = min(max_s, base_s * 2.0 ** max(0, attempt - 1))
    factor: float = 1 + random.uniform(-jitter, jitter)  # noqa: S311 - jitter, not crypto
    return delay * factor


class OutageTooLong(FactstreamError):
    """Raised by CircuitBreaker.wait when the outage outlasted ``max_outage_s``."""


class CircuitBreaker:
    """Declares an outage after N consecutive failures; callers then wait until a probe succeeds.

    While open, no request is sent: one background task probes the server every
    ``probe_interval_s`` (doubling up to ``probe_max_s``) and closes the breaker when the probe
    succeeds. Waiters are released together.

    Args:
        threshold: Consecutive failures that open the breaker.
        probe: Async health check; True when the server answers again.
        probe_interval_s: First delay between probes.
        probe_max_s: Longest delay between probes.
        on_change: Called with True when an outage starts and False when it ends.
    """

    def __init__(
        self,
        *,
        threshold: int,
        probe: Callable[[], Awaitable[bool]],
        probe_interval_s: float,
        probe_max_s: float = 30.0,
        on_change: Callable[[bool], None] | None = None,
    ) -> None:
        self.threshold = threshold
        self._probe = probe
        self._interval = probe_interval_s
        self._max_interval = max(probe_max_s, probe_interval_s)
        self._on_change = on_change or (lambda _open: None)
        self._failures = 0
        self._closed = asyncio.Event()
        self._closed.set()
        self._prober: asyncio.Task[None] | None = None
        self._opened_at = 0.0
        self._last_outage_real = False

    @property
    def is_open(self) -> bool:
        """True during an outage."""
        return not self._closed.is_set()

    def record_success(self) -> None:
        """A request reached the server."""
        self._failures = 0

    def record_failure(self) -> None:
        """A request could not reach the server; may open the breaker."""
        self._failures += 1
        if self._failures >= self.threshold and not self.is_open:
            self._open()

    def _open(self) -> None:
        self._closed.clear()
        self._opened_at = time.monotonic()
        self._on_change(True)
        self._prober = asyncio.get_running_loop().create_task(self._probe_until_up())

    async def _probe_until_up(self) -> None:
        delay, failed_probes = self._interval, 0
        while True:
            await asyncio.sleep(delay)
            try:
                up = await self._probe()
            except Exception:  # a probe that raises means "still down"
                log.debug("probe failed", exc_info=True)
                up = False
            if up:
                break
            failed_probes += 1
            delay = min(self._max_interval, delay * 2)
        self._failures = 0
        # Requests failed, but the first probe found the server up: slow requests, not an outage.
        self._last_outage_real = failed_probes > 0
        self._closed.set()
        log.warning("server is back after %.1fs; resuming", time.monotonic() - self._opened_at)
        self._on_change(False)

    async def wait(self, max_outage_s: float | None = None) -> bool:
        """Wait while the breaker is open.

        Args:
            max_outage_s: Give up (OutageTooLong) once the outage is this old; None waits forever.

        Returns:
            True if this call waited through a real outage (at least one probe failed).
        """
        if not self.is_open:
            return False
        timeout = None
        if max_outage_s is not None:
            timeout = max(0.0, self._opened_at + max_outage_s - time.monotonic())
        try:
            await asyncio.wait_for(self._closed.wait(), timeout)
        except TimeoutError as exc:
            raise OutageTooLong(f"outage longer than {max_outage_s}s") from exc
        return self._last_outage_real

    async def aclose(self) -> None:
        """Stop probing (waiters stay blocked; close only when nobody waits)."""
        if self._prober is not None:
            self._prober.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._prober
            self._prober = None
