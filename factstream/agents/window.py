"""Up to W documents of one partition in flight: decided at once, committed in input order.

The window reads a partition's records in order. For each it starts the document's decision
(retrieval and the LM: ``Editor.decide``) as soon as a slot is free, beside the decisions
of the documents before it, on the knowledge base as it stands. One committer takes the
records strictly in input order: it waits for a record's decision, commits it
(``Editor.handle``: the same steps, checks and fault handling as one document at a time)
and only then tells the caller, which acknowledges the record's offset. After each commit
the later documents of its namespace are poked: each checks its candidates and, if the
commit changed them, is decided again at once (agents/speculation.py), so that its
decision is usually current by its turn. The commit still checks it there and decides it
again if its candidates changed, so the changelog and the knowledge base are those of
W = 1 (docs/concurrency.md).

Records are read up to ``ahead`` past the window and their documents' embeddings started
at once (edit/ahead.py: a vector does not depend on the knowledge base), so they reach
the model together, in batches; reading acknowledges nothing.

Two copies of one document (the same namespace and id) are never decided at once: the
later one waits for the earlier one's commit, and so finds it applied without the LM, as
it would one at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import AsyncIterable, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from factstream.agents.dependencies import Gate, Policy, Track
from factstream.agents.editor import Editor, InputRecord, Outcome
from factstream.agents.speculation import Speculation
from factstream.metrics import timed
from factstream.resilience import backoff_delay
from factstream.store.base import StoredFact
from factstream.streams.recovery import RecoveredBatches
from factstream.tally import line

__all__ = ["Window"]

log = logging.getLogger(__name__)
# How often a hold checks whether the commit under way has begun or ended its writes.
_HOLD_POLL_S = 0.05
E = TypeVar("E")  # what the stream yields per record (a faust event)

Committed = Callable[[E, InputRecord, Outcome], Awaitable[None]]


@dataclass(frozen=True)
class _InFlight(Generic[E]):
    """A record read, its decision under way, and the event its commit sets."""

    event: E
    record: InputRecord
    decision: Speculation
    key: tuple[str, str] | None
    committed: asyncio.Event
    track: Track


class Window(Generic[E]):
    """One partition's documents in flight (at most ``size`` read and not committed).

    Args:
        editor: Decides and commits documents.
        recovered: The partition's batches found on the changelog after a restart.
        size: The most documents in flight; 1 decides each after the one before commits.
        partition: The input partition (the in-flight gauge's label).
        lookahead: How many documents nearest their commit are decided again as soon as an
            earlier commit changes their candidates (default: all); the others wait until
            they come this near.
        ahead: Records read past the window, their documents' embeddings started (one
            embedding batch: FACTSTREAM_EMBED_BATCH_SIZE in the worker).
        dependencies: Before its judgement a document waits for the commit of an earlier
            one whose planned edits may change its candidates; the policy says what it
            does while an earlier plan is not known (agents/dependencies.py). None: it is
            judged at once (and again, early, when a commit changes its candidates).
    """

    def __init__(
        self,
        editor: Editor,
        recovered: RecoveredBatches,
        size: int,
        partition: int,
        lookahead: int | None = None,
        ahead: int = 32,
        dependencies: Policy | None = None,
    ) -> None:
        self._editor, self._recovered = editor, recovered
        self._policy = dependencies if size > 1 else None
        self._lookahead = size if lookahead is None else lookahead
        self._ahead = max(ahead, 1)
        self._gauge = editor.metrics.in_flight.labels(partition=str(partition))
        self._partition = str(partition)
        self._slots = asyncio.Semaphore(size)
        self._queue: asyncio.Queue[_InFlight[E] | None] = asyncio.Queue()
        self._pending: deque[_InFlight[E]] = deque()  # read, not committed, in input order
        # (namespace, document id) -> the commit of the latest copy in flight
        self._copies: dict[tuple[str, str], asyncio.Event] = {}
        self._done = 0  # records committed (popped from ``_pending``)
        self._open = asyncio.Event()  # cleared while held (a rebalance): no commit begins
        self._open.set()
        self._idle = asyncio.Event()  # set while no commit is under way or unacknowledged
        self._idle.set()
        self._commit: asyncio.Task[Outcome] | None = None  # the commit under way
        self._reading: set[int] = set()  # offsets read and not committed
        # With ``predict``, later documents are poked as a commit's facts are written,
        # before its batch is recorded and acknowledged (``_written``); these are the facts
        # poked with, for the commit under way (None: not poked yet).
        self._poked: Sequence[StoredFact] | None = None
        if self._policy in ("predict", "draft"):
            editor.written = self._written

    async def run(
        self,
        events: AsyncIterable[E],
        record_of: Callable[[E], InputRecord],
        committed: Committed[E],
    ) -> None:
        """Decide and commit every record of ``events``; ``committed`` follows each commit,
        in input order. Returns when ``events`` ends and the last record is committed.

        An error of ``committed`` or of a commit (the editor raises only what it cannot
        survive) ends the run with it; cancelling the run cancels every decision in flight.
        Nothing is committed out of order: a record after one not committed never is.
        """
        committer = asyncio.create_task(self._commit_all(committed))
        reader = asyncio.create_task(self._read_all(events, record_of))
        tasks = {committer, reader}
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                task.result()  # the first error ends the run, whichever side it came from
            await committer  # every record read: the last ones commit
        finally:
            for task in tasks:
                task.cancel()
            self._idle.set()  # nothing commits any more: a hold waiting returns
            await asyncio.gather(*tasks, return_exceptions=True)
            await asyncio.gather(*(item.decision.cancel() for item in self._pending))
            with contextlib.suppress(KeyError):
                self._editor.metrics.in_flight.remove(self._partition)

    async def _read_all(
        self, events: AsyncIterable[E], record_of: Callable[[E], InputRecord]
    ) -> None:
        read: asyncio.Queue[tuple[E, InputRecord] | None] = asyncio.Queue(self._ahead)

        async def read_ahead() -> None:
            # Up to ``ahead`` records past the window are read, and their documents'
            # embeddings started (edit/ahead.py); nothing is acked by reading.
            try:
                async for event in events:
                    record = record_of(event)
                    if record.source.offset in self._reading:
                        # Read again while still in flight here: after a rebalance that
                        # kept the partition, faust seeks it back to its committed offset
                        # (see ``hold``). Only exact offsets in flight are skipped: one
                        # delivered out of order is still edited, never lost.
                        continue
                    self._reading.add(record.source.offset)
                    self._editor.read_ahead(record)
                    await read.put((event, record))
            finally:
                await read.put(None)

        reader = asyncio.create_task(read_ahead(), name="read-ahead")
        try:
            while (item := await read.get()) is not None:
                await self._slots.acquire()  # room in the window
                self._gauge.inc()
                event, record = item
                await self._load_recovery(record)
                self._start(event, record)
            await reader  # the events' error, if they ended with one
        finally:
            reader.cancel()
        self._queue.put_nowait(None)

    async def _load_recovery(self, record: InputRecord) -> None:
        """The oldest record in flight after a restart reads the changelog, before any
        decision; through an outage of Kafka, with back-off, as a commit would wait."""
        attempt = 0
        while True:
            try:
                await self._recovered.load(record.appended_ms)
                return
            except Exception as exc:  # noqa: BLE001 - an outage: wait as long as it lasts
                attempt += 1
                delay = backoff_delay(attempt, 0.5, 30.0)
                log.warning("changelog not read: %r; retrying in %.1fs", exc, delay)
                await asyncio.sleep(delay)

    def _start(self, event: E, record: InputRecord) -> None:
        key = self._editor.key(record)
        before = self._copies.get(key) if key is not None else None
        done = asyncio.Event()
        if key is not None:
            self._copies[key] = done
        namespace = None if key is None else key[0]
        track = Track(done)
        gate = None
        if namespace is not None and self._policy is not None:
            earlier = self._earlier(namespace, len(self._pending))
            gate = Gate(self._editor, namespace, track, earlier, self._policy, self._editor.metrics)
        decision = Speculation(
            self._editor, record, self._recovered, before, namespace, track=track, gate=gate
        )
        item = _InFlight(event, record, decision, key, done, track)
        self._pending.append(item)
        self._queue.put_nowait(item)

    def _earlier(self, namespace: str, position: int) -> Callable[[], list[Track]]:
        """The tracks of the documents of ``namespace`` read before the one read at
        ``position`` (counted among those pending then) that are not committed yet."""
        committed_then = self._done  # commits done when it was read

        def earlier() -> list[Track]:
            # Commits pop from the left: what was at ``position`` is now this far in.
            now = position - (self._done - committed_then)
            return [
                item.track
                for item in list(self._pending)[: max(now, 0)]
                if item.key is not None and item.key[0] == namespace
            ]

        return earlier

    async def hold(self) -> None:
        """Commit nothing more until ``resume``: a rebalance is under way.

        Returns once no commit is under way: one that is writing (its changelog batch, its
        facts) finishes and is acknowledged; one still deciding is cancelled, and made again
        after ``resume``, deciding afresh. The documents read ahead are kept and their
        decisions go on (they write nothing): a rebalance lasts about one commit, not the
        window's LM calls (issue 25's sixth group run). If the partition is revoked, faust
        then cancels its actor; if it stays, faust seeks it back to its committed offset and
        the records read again while in flight are skipped (``_read_all``); those
        committed meanwhile come again as duplicates (found applied, no LM).
        """
        self._open.clear()
        while (commit := self._commit) is not None and not commit.done():
            if not self._editor.writing:
                commit.cancel()
            await asyncio.wait({commit}, timeout=_HOLD_POLL_S)
        await self._idle.wait()

    def resume(self) -> None:
        """Commit again (the partition stayed with this worker)."""
        self._open.set()

    async def _commit_one(self, item: _InFlight[E]) -> Outcome:
        """Commit ``item`` once no rebalance holds the window, again if one cancels it."""
        decided: Speculation | None = item.decision
        while True:
            while not self._open.is_set():  # held meanwhile? (checked again once woken)
                await self._open.wait()
            self._idle.clear()
            self._commit = asyncio.ensure_future(
                self._editor.handle(item.record, self._recovered, decided)
            )
            try:
                return await self._commit
            except asyncio.CancelledError:
                if (task := asyncio.current_task()) is not None and task.cancelling():
                    raise  # the run itself is cancelled
                log.info(
                    "commit of %s held by a rebalance: made again after it", item.record.source
                )
                self._idle.set()
                await item.decision.cancel()
                decided = None
            finally:
                self._commit = None

    async def _commit_all(self, committed: Committed[E]) -> None:
        ended = time.perf_counter()  # the previous commit's end
        while (item := await self._queue.get()) is not None:
            begun = time.perf_counter()
            outcome = await self._commit_one(item)
            # Between two commits, outside them: the record not read yet, a rebalance's hold.
            self._editor.steps["wait_turn"] = begun - ended
            self._reading.discard(self._pending.popleft().record.source.offset)
            self._done += 1
            item.committed.set()
            poked, self._poked = self._poked, None
            if item.key is not None:
                if self._copies.get(item.key) is item.committed:
                    del self._copies[item.key]
                changed = self._editor.changed
                if poked is None or changed is not poked:  # not poked with these yet
                    self._poke(item.key[0], changed)
            steps = self._editor.steps
            with timed(steps, "ack"):
                await committed(item.event, item.record, outcome)
            if item.key is not None:
                log.info("commit %r steps %s", item.key[1], _steps(steps))
                log.info("commit %r requests %s", item.key[1], line(self._editor.requests))
            self._idle.set()
            self._slots.release()
            self._gauge.dec()
            ended = time.perf_counter()

    def _written(self, namespace: str, stored: list[StoredFact]) -> None:
        """The commit under way (the oldest pending) wrote its facts ``stored``: the later
        documents of ``namespace`` check their decisions now, beside its applied record and
        acknowledgement, as they would after it (``Editor.written``)."""
        if not self._pending:
            return
        self._pending[0].track.written = True
        self._poked = stored
        self._poke(namespace, stored, skip=1)

    def _poke(self, namespace: str, changed: Sequence[StoredFact] | None, skip: int = 0) -> None:
        """A document of ``namespace`` committed, changing the facts ``changed`` (None: not
        known): its later documents (past the first ``skip`` pending) check their decisions."""
        for distance, later in enumerate(list(self._pending)[skip:]):
            if later.key is not None and later.key[0] == namespace:
                later.decision.poke(changed, now=distance < self._lookahead)


def _steps(steps: dict[str, float]) -> str:
    """A commit's seconds per step, for the log (bench/commits.py reads them)."""
    return " ".join(f"{step}={seconds:.4f}" for step, seconds in steps.items())
