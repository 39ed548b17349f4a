"""The worker's stop on SIGTERM or SIGINT: no new document, none finished, a bounded exit.

faust's own stop (App.on_stop) waits, with ``stream_wait_empty``, until every event read
is acknowledged. The editor reads ahead (agents/window.py: a window and an embedding batch
per partition) and acknowledges an event only once its document is committed, so that
wait meant committing every document read ahead first: a worker stopped with a full read-
ahead went on editing for tens of seconds (98 documents over 28 s in issue 25's group run),
long enough for the group to rebalance meanwhile; faust then closes the consumer's client
under its own heartbeat (``_on_rebalance_when_stopped``) and the worker looped on
"Heartbeat session expired" without ever exiting.

Here a stop signal first ends the editing: every editor actor is cancelled at once (what
it had in flight is abandoned, never acknowledged: design.md section 5, its next owner
reads it again and finds a batch already published on the changelog), actors started
afterwards take nothing, and faust no longer waits for the abandoned events. faust's stop
then goes on as before: committing the offsets acknowledged so far and leaving the group.
A watchdog thread (not a loop timer: it must fire even if the loop is stuck) ends the
process if the stop has not within ``FACTSTREAM_WORKER_STOP_TIMEOUT_S``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import warnings
from typing import Any, Protocol

import faust

__all__ = ["EXIT_STOP_TIMEOUT", "Actors", "Holdable", "StoppingWorker"]

log = logging.getLogger(__name__)

# The exit status of a worker whose stop ran past its timeout (sysexits' EX_SOFTWARE + 1).
EXIT_STOP_TIMEOUT = 71


class Holdable(Protocol):
    """An actor's commits, which a rebalance holds (agents/window.py's ``Window``)."""

    async def hold(self) -> None: ...

    def resume(self) -> None: ...


class Actors:
    """The editor actors running in this worker, so that a stop can end them at once and
    a rebalance can hold their commits (``hold``, ``resume``)."""

    def __init__(self) -> None:
        self.stopping = False
        self._tasks: set[asyncio.Task[Any]] = set()
        self._commits: dict[int, Holdable] = {}  # by documents partition
        self._held = False

    async def enrol(self, partition: int, commits: Holdable) -> None:
        """An actor's commits, held at once if a rebalance is under way."""
        self._commits[partition] = commits
        if self._held:
            await commits.hold()

    def leave_partition(self, partition: int, commits: Holdable) -> None:
        """The actor of ``partition`` ends."""
        if self._commits.get(partition) is commits:
            del self._commits[partition]

    async def hold(self) -> None:
        """A rebalance begins (a revocation): every actor stops committing; returns once
        none is (a commit writing finishes first, one deciding is made again later)."""
        self._held = True
        began = time.monotonic()
        await asyncio.gather(*(commits.hold() for commits in list(self._commits.values())))
        log.info(
            "rebalance: the commits of %d actor(s) held in %.2fs",
            len(self._commits),
            time.monotonic() - began,
        )

    def resume(self, partitions: set[int]) -> None:
        """The rebalance is over: the actors of ``partitions`` (kept) commit again. faust
        has ended those of the partitions revoked."""
        self._held = False
        for partition in partitions:
            if (commits := self._commits.get(partition)) is not None:
                commits.resume()

    def enter(self) -> bool:
        """Register the calling actor's task; False: the worker is stopping, take nothing."""
        if self.stopping:
            return False
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        return True

    def leave(self) -> None:
        """The calling actor ends."""
        task = asyncio.current_task()
        if task is not None:
            self._tasks.discard(task)

    def stop(self) -> None:
        """No actor takes a document from now on; those running are cancelled."""
        self.stopping = True
        for task in list(self._tasks):
            task.cancel()

    async def wait(self, timeout_s: float) -> None:
        """Wait (at most ``timeout_s``) for the cancelled actors to end."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=timeout_s)


class StoppingWorker(faust.Worker):
    """faust's worker, whose stop signals end the editing first (module docstring).

    Args:
        app: The faust app.
        actors: Its editor actors.
        stop_timeout_s: Seconds from the signal after which the process exits regardless.
        kwargs: faust.Worker's.
    """

    def __init__(self, app: faust.App, actors: Actors, stop_timeout_s: float, **kwargs: Any):
        super().__init__(app, **kwargs)
        self._actors, self._stop_timeout_s = actors, stop_timeout_s
        self._watchdog: threading.Timer | None = None

    def _on_sigterm(self) -> None:
        self._stop_editing("SIGTERM")
        super()._on_sigterm()

    def _on_sigint(self) -> None:
        self._stop_editing("SIGINT")
        super()._on_sigint()

    def _stop_editing(self, signal_name: str) -> None:
        if self._watchdog is not None:  # a second signal: the stop is under way
            return
        log.info(
            "%s: stopping; documents in flight abandoned (read again by their next owner), "
            "exit within %.0fs",
            signal_name,
            self._stop_timeout_s,
        )
        # The abandoned events are never acknowledged: faust must not wait for them. (faust
        # warns that the setting was read already: its stop reads it again, as wanted.)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.app.conf.stream_wait_empty = False
        self._actors.stop()
        self._watchdog = threading.Timer(self._stop_timeout_s, _stop_timed_out)
        self._watchdog.daemon = True
        self._watchdog.start()


def _stop_timed_out() -> None:
    # Only offsets acknowledged (documents committed) were committed: exiting here is as
    # safe as a crash, and the group reassigns this worker's partitions at its session timeout.
    log.critical("the stop ran past FACTSTREAM_WORKER_STOP_TIMEOUT_S; exiting now")
    os._exit(EXIT_STOP_TIMEOUT)
