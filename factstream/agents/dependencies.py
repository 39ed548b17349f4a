"""Which earlier documents in flight a document depends on: wait for those, decide once.

A document of the window (agents/window.py) retrieves its candidates at once, but before
its judgement (classification and rewrites, ``DecisionGate.judge_on``) it looks at the
earlier documents of its namespace still in flight. Where an earlier document's plan is
known, the tests of ``retrieval.could_change`` on its PLANNED edits (the facts it will add
or rewrite into, with their vectors; the facts it will make false or end) tell whether it
will change this document's candidates. If one will, the document waits for the nearest
such commit, retrieves again and is decided once, on what serial processing shows it,
rather than now and again later. Documents it cannot affect go ahead.

An earlier plan is known in two steps: its extraction (the facts it adds; it needs the
document alone, so it is known within one LM call, whatever the knowledge base does), then
its judgement (what it makes false, rewrites; it waits for that document's own
dependencies). Before they are known the policy (``FACTSTREAM_EDITOR_DEPENDENCIES``)
decides: ``speculate`` judges now, ``extraction`` waits for the extraction only, ``wait``
waits for the whole plan.

Nothing here decides what the LM is shown: the commit still checks every decision's
candidates (edit/conflicts.py) and decides again where a prediction missed, so the
changelog stays that of W = 1 (docs/concurrency.md).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from enum import Enum
from typing import Literal, Protocol

from factstream.edit.conflicts import conflict
from factstream.edit.pipeline import EditPlan, PlannedEdit, draft_adds
from factstream.edit.retrieval import Overlay
from factstream.embed.base import Vector
from factstream.metrics import WorkerMetrics
from factstream.store.base import SearchHit, StoredFact
from factstream.topics.records import EditOp, Fact, HistoryEntry, edit_id_for, fact_id_for

__all__ = ["Gate", "Policy", "Track", "Verdict"]

Policy = Literal["predict", "draft", "speculate", "extraction", "wait"]
_PREDICTED = ("predict", "draft")  # the policies that judge on the predicted knowledge base

# Edits that change an existing fact's text or truth (a reinforce changes neither).
_ENDS = (EditOp.INVALIDATE, EditOp.CLOSE, EditOp.REWRITE)
_NEW = (EditOp.ADD, EditOp.REWRITE)
log = logging.getLogger(__name__)
_REPROBES = 3  # retrievals again, at most, for commits made while it looked


class Verdict(Enum):
    """What an earlier document's plan, as far as known, does to a document's candidates."""

    NO = "no"
    DEPENDS = "depends"
    NO_EXTRACTION = "no_extraction"  # its extraction is not known yet
    NO_JUDGEMENT = "no_judgement"  # its adds cannot change them; its judgement is not known


class Predictor(Protocol):
    """The editor's side a gate uses (agents/editor.py)."""

    def commits(self, namespace: str) -> int: ...

    async def probe(self, plan: EditPlan) -> tuple[int, list[SearchHit]]: ...

    def could_change(
        self, plan: EditPlan, seen: Sequence[SearchHit], changed: Sequence[StoredFact]
    ) -> bool: ...

    async def embed(self, texts: list[str]) -> list[Vector]: ...

    async def predict(
        self, plan: EditPlan, overlay: Overlay
    ) -> tuple[int, list[SearchHit]] | None: ...


class Track:
    """One document of the window as later documents see it: its plan, as far as known.

    Args:
        committed: Set when its commit is done.
    """

    def __init__(self, committed: asyncio.Event) -> None:
        self.committed = committed
        self.draft: EditPlan | None = None  # its first decision under way (extraction)
        # The ids of the candidates it is judged on (None: not known yet, or judged
        # again): its judgement may end only those.
        self.candidates: frozenset[str] | None = None
        self.plan: EditPlan | None = None  # its decided plan; None while (re)deciding
        self.settled = False  # decided, with or without a plan
        self.recovered = False  # decided by a batch found on the changelog
        # Its facts are in the store, its commit counted (``Editor.written``): no longer
        # predicted, though its commit has not ended.
        self.written = False
        self._progress = asyncio.Event()
        self._vectors: dict[str, Vector] = {}
        self._embedding = asyncio.Lock()
        self._settling: list[Callable[[], None]] = []  # told once, at its next decision

    def when_settled(self, told: Callable[[], None]) -> None:
        """Call ``told`` once, when it is next decided (a later document judged on its
        extraction alone checks its candidates then)."""
        self._settling.append(told)

    def progressed(self) -> None:
        """Its plan is better known: wake the documents waiting for it."""
        self._progress.set()
        self._progress = asyncio.Event()
        if self.settled:
            settling, self._settling = self._settling, []
            for told in settling:
                told()

    def drafting(self, plan: EditPlan) -> None:
        """Its first decision's plan under way (the extraction in it, once known)."""
        self.draft = plan
        self.progressed()

    def decided(self, plan: EditPlan | None, *, recovered: bool = False) -> None:
        """Decided (again): ``plan``, or no plan (bad input, a duplicate, a recovered batch)."""
        self.plan, self.settled, self.recovered = plan, True, recovered
        self.progressed()

    def deciding_again(self) -> None:
        """Its judgement is being made again: not known until ``decided``."""
        self.plan, self.settled, self.candidates = None, False, None
        self.progressed()

    def mark(self) -> asyncio.Event:
        """Set at its next progress (take it before looking at the plan)."""
        return self._progress

    async def changed(self, mark: asyncio.Event) -> None:
        """Wait until its plan is better known than at ``mark``, or it commits."""
        progress = asyncio.create_task(mark.wait())
        commit = asyncio.create_task(self.committed.wait())
        try:
            await asyncio.wait({progress, commit}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            progress.cancel()
            commit.cancel()

    async def vectors(self, texts: list[str], predictor: Predictor) -> list[Vector]:
        """The vectors of its planned new facts' ``texts`` (embedded once)."""
        async with self._embedding:
            missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
            if missing:
                self._vectors.update(zip(missing, await predictor.embed(missing), strict=True))
        return [self._vectors[t] for t in texts]


def _planned_fact(plan: EditPlan, position: int, edit: PlannedEdit) -> Fact:
    """A new fact ``edit`` of ``plan`` will make, as the knowledge base will hold it."""
    doc = plan.document
    structure = edit.structure
    return Fact(
        fact_id=fact_id_for(doc.namespace, doc.id, position),
        namespace=doc.namespace,
        text=edit.text,
        truth=True,
        history=[
            HistoryEntry(
                ts=doc.timestamp,
                truth=True,
                document_id=doc.id,
                edit_id=edit_id_for(doc.namespace, doc.id, position),
            )
        ],
        first_seen=doc.timestamp,
        last_changed=doc.timestamp,
        valid_from=edit.valid_from or doc.timestamp,
        valid_to=edit.valid_to,
        subject=None if structure is None else structure.subject,
        relation=None if structure is None else structure.relation,
        object=None if structure is None else structure.object,
    )


class Gate:
    """One document's first decision: judged once no earlier document in flight will
    change its candidates (``pipeline.DecisionGate``).

    Args:
        predictor: The editor (commits, retrieval again, the ranking's test, embeddings).
        namespace: The document's namespace.
        track: The document's own track (later documents read it).
        earlier: The tracks of the earlier documents of its namespace not yet committed,
            in input order.
        policy: What to do while an earlier plan is not known.
        metrics: The worker's (waits, and how far the document waited for).
    """

    def __init__(
        self,
        predictor: Predictor,
        namespace: str,
        track: Track,
        earlier: Callable[[], list[Track]],
        policy: Policy,
        metrics: WorkerMetrics,
    ) -> None:
        self._predictor, self._namespace = predictor, namespace
        self._track, self._earlier, self._policy = track, earlier, policy
        self._metrics = metrics
        self.base = predictor.commits(namespace)  # commits counted before ``hits``
        self._counted: set[str] = set()
        self._nearest: int | None = None  # the nearest earlier document it waited for
        # ``draft``: an earlier document it was judged on by its extraction alone has been
        # decided since; ``on_draft`` (its speculation's) is told at once.
        self.draft_settled = False
        self.on_draft: Callable[[], None] | None = None

    def extracted(self, plan: EditPlan) -> None:
        self._track.drafting(plan)

    async def judge_on(self, plan: EditPlan) -> list[SearchHit]:
        hits = await self._judge_on(plan)
        self._track.candidates = frozenset(hit.fact.fact_id for hit in hits)
        return hits

    async def _judge_on(self, plan: EditPlan) -> list[SearchHit]:
        self._track.drafting(plan)
        hits, reprobes = plan.retrieved, 0
        while True:
            earlier = self._earlier()
            marks = [track.mark() for track in earlier]  # before looking: no progress missed
            verdicts = [await self.verdict(track, plan, hits) for track in earlier]
            depends = [i for i, v in enumerate(verdicts) if v is Verdict.DEPENDS]
            if depends and self._policy in _PREDICTED:
                # Value speculation: judged against the knowledge base as the earlier plans
                # will leave it, once the plans it depends on are decided (not committed);
                # with ``draft``, at once, an undecided one predicted by its extraction.
                unsettled = [i for i in depends if not earlier[i].settled]
                if self._policy == "draft":  # waits only where the judgement may end one
                    unsettled = [i for i in unsettled if _may_end(earlier[i], hits)]
                if unsettled:
                    self._count("judgement")
                    await _first([(earlier[i], marks[i]) for i in unsettled])
                    continue
                found = await self.current(plan)
                if found is not None:
                    log.info("%r judged on the predicted knowledge base", plan.document.id)
                    self._count("predicted")
                    self.base, hits = found
                    return hits
            if depends:  # the nearest: every one before it commits first
                blocker, distance = earlier[depends[-1]], len(earlier) - depends[-1]
                log.info(
                    "%r waits for the commit %d before it: its plan may change the candidates",
                    plan.document.id,
                    distance,
                )
                self._count("depends")
                self._nearest = min(distance, self._nearest or distance)
                await blocker.committed.wait()
                before = hits
                self.base, hits = await self._predictor.probe(plan)
                # Did the wait matter? Only if it changed what the LM is shown.
                changed = conflict(before, hits, plan.document.timestamp) is not None
                self._metrics.window_outcomes.labels(
                    step="wait", changed=str(changed).lower()
                ).inc()
                continue
            unknown = [
                (track, mark)
                for track, mark, verdict in zip(earlier, marks, verdicts, strict=True)
                if self._waits(verdict)
            ]
            if unknown:
                self._count("unknown")
                await _first(unknown)
                continue
            if self._predictor.commits(self._namespace) != self.base and reprobes < _REPROBES:
                # Earlier documents committed while it looked: their effects are not in
                # ``hits`` and no prediction covers them any more.
                reprobes += 1
                self.base, hits = await self._predictor.probe(plan)
                continue
            if self._nearest is not None:
                self._metrics.dependency_distance.observe(self._nearest)
            return hits

    async def current(self, plan: EditPlan) -> tuple[int, list[SearchHit]] | None:
        """With the ``predict`` policy, ``plan``'s candidates on the knowledge base as the
        decided plans of the earlier documents still in flight will leave it (their new
        facts in, the facts they end out), with the commits counted before; None where it
        cannot be predicted (another policy, a batch recovered, a fact with an end or a
        later event time; the ranking's settings)."""
        if self._policy not in _PREDICTED:
            return None
        self.draft_settled = False  # the overlay is made again: what settled is in it
        overlay = await self._overlay(plan)
        return None if overlay is None else await self._predictor.predict(plan, overlay)

    async def _overlay(self, plan: EditPlan) -> Overlay | None:
        when = plan.document.timestamp
        added: list[StoredFact] = []
        ended: set[str] = set()
        for track in self._earlier():
            if track.committed.is_set() or track.written:
                continue  # in the store: retrieved, not predicted
            if not track.settled:
                draft = track.draft
                if self._policy != "draft" or draft is None or draft.extraction is None:
                    continue  # not decided: predicted to change nothing (the commit checks)
                # Predicted by its extraction alone: it adds those facts and ends nothing.
                # Its judgement may end a candidate, or restate one (no add), and its
                # reinforces and rewrites come first in its batch (the new facts' ids):
                # once it is decided, this document checks its candidates again.
                track.when_settled(self._settled_draft)
                source = draft
                planned = draft_adds(draft.extraction)
            elif track.plan is None:
                if track.recovered:
                    return None
                continue
            else:
                source = track.plan
                planned = source.planned
            if source.document.timestamp > when:
                return None
            ended |= {p.fact_id for p in planned if p.op in _ENDS and p.fact_id}
            new = [(i, p) for i, p in enumerate(planned) if p.op in _NEW]
            if any(p.valid_to is not None for _, p in new):
                return None  # an interval that ends: whether it holds then is the store's
            vectors = await track.vectors([p.text for _, p in new], self._predictor)
            added += [
                StoredFact(_planned_fact(source, i, p), vector)
                for (i, p), vector in zip(new, vectors, strict=True)
            ]
        return Overlay(added, frozenset(ended))

    async def verdict(self, track: Track, plan: EditPlan, hits: Sequence[SearchHit]) -> Verdict:
        """What ``track``'s plan, as far as known, does to ``plan``'s candidates ``hits``."""
        if track.settled:
            if track.plan is None:  # a recovered batch may change anything; else nothing
                return Verdict.DEPENDS if track.recovered else Verdict.NO
            ids = {hit.fact.fact_id for hit in hits}
            ended = {p.fact_id for p in track.plan.planned if p.op in _ENDS}
            if ended & ids:
                return Verdict.DEPENDS
            new = [(i, p) for i, p in enumerate(track.plan.planned) if p.op in _NEW]
            return Verdict.DEPENDS if await self._enters(track, new, plan, hits) else Verdict.NO
        draft = track.draft
        if draft is None or draft.extraction is None:
            return Verdict.NO_EXTRACTION
        decided_by = draft.extraction.decided_by
        # Positions past any batch's: these facts' ids are only for the ranking's test.
        adds = [
            (10_000 + i, PlannedEdit.adding(fact, decided_by))
            for i, fact in enumerate(draft.extraction.facts)
        ]
        if await self._enters(track, adds, plan, hits):
            return Verdict.DEPENDS
        return Verdict.NO_JUDGEMENT

    async def _enters(
        self,
        track: Track,
        new: list[tuple[int, PlannedEdit]],
        plan: EditPlan,
        hits: Sequence[SearchHit],
    ) -> bool:
        """Whether one of ``track``'s planned new facts may enter ``plan``'s candidates."""
        source = track.plan or track.draft
        if not new or source is None:
            return False
        vectors = await track.vectors([edit.text for _, edit in new], self._predictor)
        facts = [
            StoredFact(_planned_fact(source, position, edit), vector)
            for (position, edit), vector in zip(new, vectors, strict=True)
        ]
        return self._predictor.could_change(plan, hits, facts)

    def _settled_draft(self) -> None:
        self.draft_settled = True
        if self.on_draft is not None:
            self.on_draft()

    def _waits(self, verdict: Verdict) -> bool:
        if verdict is Verdict.NO_EXTRACTION:
            return self._policy != "speculate"
        return verdict is Verdict.NO_JUDGEMENT and self._policy == "wait"

    def _count(self, on: str) -> None:
        """Count a document's first wait of each kind."""
        if on not in self._counted:
            self._counted.add(on)
            self._metrics.dependency_waits.labels(on=on).inc()


def _may_end(track: Track, hits: Sequence[SearchHit]) -> bool:
    """Whether ``track``'s judgement, not known yet, may end one of ``hits`` (it may end
    only its own candidates)."""
    if track.candidates is None:
        return True
    return any(hit.fact.fact_id in track.candidates for hit in hits)


async def _first(tracks: list[tuple[Track, asyncio.Event]]) -> None:
    """Wait until one of ``tracks`` is better known than at its mark, or commits."""
    waits = [asyncio.create_task(track.changed(mark)) for track, mark in tracks]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
