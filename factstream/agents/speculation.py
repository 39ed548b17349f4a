"""One document's early decision, kept current until its commit (docs/concurrency.md).

A document in the window is decided as soon as it is read, on the knowledge base as it
stands. Each time an earlier document of its namespace commits, the window pokes it with
the facts that commit changed. If they may have changed its candidates (a cheap test on
their vectors, ``Editor.could_change``), it retrieves them again (``Editor.probe``) and,
if they changed, decides again at once (``Editor.redecide``, keeping its embedding and
extraction), beside the other documents' work. A re-decision that a newer commit makes
stale is cancelled and started again on the newer candidates. So by its commit turn a
document's decision has usually seen every earlier commit, and its commit does not wait
for an LM round trip.

Nothing done here is final. At its turn the commit takes the latest decision (``final``)
and checks it against the knowledge base as it then stands (``Editor.handle``), which is
what keeps the result serial-equivalent; a speculative re-decision that failed (an outage,
invalid LM output on candidates serial processing might never show) is dropped, and the
commit's check decides the document again, where a failure counts.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Generator, Sequence
from typing import Any

from factstream.agents.dependencies import Gate, Track
from factstream.agents.editor import Decision, Editor, InputRecord
from factstream.edit.conflicts import conflict
from factstream.edit.pipeline import EditPlan
from factstream.store.base import SearchHit, StoredFact
from factstream.streams.recovery import RecoveredBatches

__all__ = ["Speculation"]

log = logging.getLogger(__name__)


class Speculation:
    """A document's decision, made now and kept current until ``final`` takes it (awaiting
    the speculation is ``final``).

    Args:
        editor: Decides, probes and re-decides documents.
        record: The document's input record.
        recovered: The partition's batches found on the changelog.
        before: The commit of an earlier copy of the document, to wait for first.
        namespace: The document's namespace (None: bad input).
        track: What later documents read of its plan (agents/dependencies.py).
        gate: Holds its first judgement until no earlier document in flight will change
            its candidates (None: judge at once).
    """

    def __init__(
        self,
        editor: Editor,
        record: InputRecord,
        recovered: RecoveredBatches,
        before: asyncio.Event | None = None,
        namespace: str | None = None,
        *,
        track: Track | None = None,
        gate: Gate | None = None,
    ) -> None:
        self._editor, self._namespace = editor, namespace
        self._track, self._gate = track, gate
        self._base = 0 if namespace is None else editor.commits(namespace)
        self._decision: Decision | None = None
        self._poked, self._idle = asyncio.Event(), asyncio.Event()
        self._changed: list[StoredFact] | None = []  # since the last check (None: unknown)
        self._task = asyncio.create_task(self._run(record, recovered, before))
        if gate is not None:  # ``draft``: an earlier document it was judged on is decided
            gate.on_draft = lambda: self.poke(None)

    def __await__(self) -> Generator[Any, None, Decision]:
        return self.final().__await__()

    def poke(self, changed: Sequence[StoredFact] | None, *, now: bool = True) -> None:
        """An earlier document of its namespace committed, changing the facts ``changed``
        (None: not known): check the candidates again if that may have changed them, ``now``
        or, if not (the document's turn is far), at the first poke that says ``now``."""
        if self._task.done():
            return
        if changed is None or self._changed is None:
            self._changed = None
        else:
            self._changed += changed
        if now and self._changed != []:
            self._poked.set()
            self._idle.clear()

    async def final(self) -> Decision:
        """The latest decision once no check or re-decision is under way; keeping it current
        stops. Raises the first decision's error."""
        idle = asyncio.create_task(self._idle.wait())
        try:
            await asyncio.wait({idle, self._task}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            idle.cancel()
        if self._task.done():
            self._first_error()
        else:
            await self.cancel()
        assert self._decision is not None  # noqa: S101 - set before the loop goes idle
        return self._decision

    def _first_error(self) -> None:
        """Raise the first decision's error, unless the knowledge base changed under it:
        then it was met on candidates serial processing may never show, and the commit
        decides the document afresh (a ``Decision`` without a plan), where an error counts."""
        try:
            self._task.result()
        except Exception as exc:
            if self._namespace is None or self._editor.commits(self._namespace) == self._base:
                raise
            log.info("a decision failed on an older knowledge base, left to the commit: %r", exc)
            self._decision = Decision()

    async def cancel(self) -> None:
        """Stop, and cancel the work under way."""
        await _cancel(self._task)

    async def _run(
        self, record: InputRecord, recovered: RecoveredBatches, before: asyncio.Event | None
    ) -> None:
        if before is not None:
            await before.wait()  # an earlier copy of this document commits first
        if self._gate is None:
            self._decision = await self._editor.decide(record, recovered)
        else:
            self._decision = await self._editor.decide(record, recovered, self._gate)
        plan = self._decision.plan
        if self._track is not None:
            self._track.decided(plan, recovered=self._decision.recovered is not None)
        if self._namespace is not None and self._decision.base == self._editor.commits(
            self._namespace
        ):
            self._changed = []  # it saw every commit poked so far
            self._poked.clear()
        if self._gate is not None and self._gate.draft_settled:
            self.poke(None)  # judged on an earlier extraction whose judgement is known now
        if plan is None or plan.vector is None:
            return  # no candidates to keep current (bad input, a batch found, a baseline)
        await self._keep_current(plan)

    async def _keep_current(self, first: EditPlan) -> None:
        seen = first.retrieved  # the candidates of the newest decision, made or under way
        redo: asyncio.Task[EditPlan] | None = None
        confirmed = 0  # commits counted when ``seen`` was last found to stand
        try:
            while True:
                if redo is None and not self._poked.is_set():
                    self._idle.set()
                poked = asyncio.create_task(self._poked.wait())
                try:
                    waits = {poked} if redo is None else {poked, redo}
                    await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    poked.cancel()
                if redo is not None and redo.done():
                    seen = self._settle(redo, confirmed)
                    redo = None
                if not self._poked.is_set():
                    continue
                self._poked.clear()
                changed, self._changed = self._changed, []
                if changed is not None and not self._editor.could_change(first, seen, changed):
                    continue  # the commit's check retrieves again, in case
                base, now = await self._probe(first)
                reason = conflict(seen, now, first.document.timestamp)
                if reason is None:
                    confirmed = base
                    if redo is None:
                        self._decision = dataclasses.replace(self._now(), base=base)
                    continue
                if redo is not None:  # a newer commit made it stale
                    await _cancel(redo)
                if self._track is not None:
                    self._track.deciding_again()
                redo = asyncio.create_task(self._editor.redecide(first, now, reason, "early"))
                seen, confirmed = now, base
        finally:
            if redo is not None:
                await _cancel(redo)

    async def _probe(self, plan: EditPlan) -> tuple[int, list[SearchHit]]:
        """The candidates as they stand now; with the ``predict`` policy, as the earlier
        documents still in flight will leave them (``Gate.current``)."""
        found = None if self._gate is None else await self._gate.current(plan)
        return found if found is not None else await self._editor.probe(plan)

    def _now(self) -> Decision:
        assert self._decision is not None  # noqa: S101 - set before the loop starts
        return self._decision

    def _settle(self, redo: asyncio.Task[EditPlan], confirmed: int) -> list[SearchHit]:
        """Take a finished re-decision (valid as of ``confirmed`` commits); the candidates
        the decision kept stands on."""
        try:
            # Still the same document, found not applied (``checked``) by the first decision.
            self._decision = Decision(redo.result(), base=confirmed, checked=self._now().checked)
        except Exception as exc:  # noqa: BLE001 - speculative: the commit's check decides
            log.info("a speculative re-decision failed, left to the commit: %r", exc)
        plan = self._now().plan
        assert plan is not None  # noqa: S101 - only decisions with a plan are kept current
        if self._track is not None:
            self._track.decided(plan)
        return plan.retrieved


async def _cancel(task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` and wait for it to end, its outcome discarded; a cancellation of
    the caller while it waits is not swallowed (a loop that swallowed it would never end)."""
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise
    except Exception:  # noqa: BLE001, S110 - speculative work: discarded either way
        pass
