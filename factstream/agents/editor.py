"""The editor: one input record in, its edit batch on the changelog and applied, or a dead letter.

The order of effects is the guarantee (docs/design.md section 5): the batch is durable on the
changelog before it is applied, it is applied before the input offset can be committed
(the caller acks only after ``handle`` returns), and a document whose batch is applied or
already on the changelog never reaches the LM again.

Editing is two steps, so that several documents can be in flight (agents/window.py):
``decide`` (retrieval and the LM, on the knowledge base as it stands) may run early and
beside other documents' decisions; ``handle`` commits, one document at a time in input
order. A decision made while an earlier document of its namespace was being committed is
checked at its commit (edit/conflicts.py) and made again if its candidates changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal, Protocol, TypeVar

from aiokafka.errors import KafkaError, ProducerFenced

from factstream.agents.ledger import Ledger
from factstream.agents.series import NamespaceSeries
from factstream.clients import Clients
from factstream.config import EditorSettings, WorkerSettings
from factstream.edit.ahead import DocumentVectors, FactVectors
from factstream.edit.conflicts import Conflict, conflict
from factstream.edit.materializer import Materializer, Pending
from factstream.edit.pipeline import (
    DecisionGate,
    EditContext,
    EditPlan,
    batch_id_for,
    bound_problem,
    edit_document,
    retrieve,
    timed,
    to_records,
)
from factstream.edit.retrieval import Overlay, Retrieval, could_change
from factstream.embed.base import Vector
from factstream.errors import BadInput, LMOutputInvalid, StoreUnavailable
from factstream.resilience import backoff_delay
from factstream.store.base import Expecting, SearchHit, StoredFact
from factstream.streams.changelog import ChangelogPublisher
from factstream.streams.decode import decode_document
from factstream.streams.recovery import RecoveredBatches
from factstream.tally import Tally, counting
from factstream.text.names import document_title
from factstream.topics.records import Document, EditOp, FactEdit, InputRef

__all__ = ["Decision", "Editor", "InputRecord", "Outcome", "WindowGate"]

log = logging.getLogger(__name__)

# Outages stop progress, with back-off, and never drop a document.
_TRANSIENT = (StoreUnavailable, KafkaError, ConnectionError, asyncio.TimeoutError)
# The edits that write a fact with a new text (to embed).
_NEW = frozenset({EditOp.ADD, EditOp.REWRITE})
T = TypeVar("T")
# Other errors are retried this many times, then the record is dead-lettered with the error.
_POISON_ATTEMPTS = 5


class Outcome(StrEnum):
    """What became of one input record (a metric label)."""

    APPLIED = "applied"
    EMPTY = "empty"  # edited, and nothing to change
    DUPLICATE = "duplicate"  # its batch was applied before (a redelivery)
    RECOVERED = "recovered"  # its batch was on the changelog; applied without the LM
    REVIEW = "review"  # over the blast radius; held for a person
    DEAD_LETTER = "dead_letter"


@dataclass(frozen=True)
class InputRecord:
    """One record of the documents topic as the consumer saw it."""

    key: bytes | None
    value: bytes | None
    source: InputRef
    appended_ms: int


@dataclass(frozen=True)
class Decision:
    """What deciding a document early found, for its commit.

    Attributes:
        plan: The LM's decision, on the candidates of that moment.
        recovered: Its batch, found on the changelog (it skips the LM).
        base: Commits of its namespace counted when it began: if none came since, the
            knowledge base it retrieved from is the one its commit sees.
        checked: Commits of every namespace counted (``Ledger.serial``) when it found the
            document not applied (None: not found so).
    """

    plan: EditPlan | None = None
    recovered: list[FactEdit] | None = None
    base: int = 0
    checked: int | None = None


class WindowGate(DecisionGate, Protocol):
    """A decision's gate (agents/dependencies.py) that may retrieve again before the
    judgement: ``base`` counts the commits of its namespace before the candidates judged."""

    base: int


def _new_texts(decision: Decision | None) -> list[str]:
    """The texts of the new facts a decision's plan writes (added, or rewritten into)."""
    plan = None if decision is None else decision.plan
    return [] if plan is None else [e.text for e in plan.planned if e.op in _NEW]


def _outcome(plan: EditPlan) -> tuple[bool, str]:
    """What a plan commits (over the blast radius, or its batch): two plans with the same
    outcome write the same changelog records."""
    return plan.over_limit, batch_id_for(plan.document, plan.planned)


def _started(read: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
    """``read`` begun now; its error is met where it is awaited, or not at all if it is
    cancelled unused (never logged as an error nobody retrieved)."""
    task = asyncio.create_task(read)
    task.add_done_callback(lambda done: done.cancelled() or done.exception())
    return task


def _where(record: InputRecord) -> str:
    src = record.source
    return f"{src.topic}[{src.partition}]@{src.offset}"


class Editor:
    """Edits the knowledge base for each document, in the order it is given them.

    Args:
        clients: The fact store, embedder and LM task runner; the metrics.
        publisher: Where edit batches, dead letters and documents for review go.
        editor: How a document is edited (retrieval, classification, blast radius).
        worker: The worker's limits (the largest document accepted), and which namespaces
            get series of their own.
        series: The worker's namespaces with series of their own (default: one of this
            editor's, from ``worker``).
    """

    def __init__(
        self,
        clients: Clients,
        publisher: ChangelogPublisher,
        editor: EditorSettings,
        worker: WorkerSettings,
        series: NamespaceSeries | None = None,
    ) -> None:
        self._clients, self._publisher = clients, publisher
        self._max_bytes, self._max_edits = worker.max_document_bytes, editor.max_edits
        self._subject_check = editor.subject_check
        self._ahead = DocumentVectors(clients.embedder)
        store = clients.store
        # A new namespace's tenant is made as its document is read ahead, with the others'.
        self._expect = store.expect if isinstance(store, Expecting) else None
        self._ctx = EditContext(
            clients.store, clients.embedder, clients.runner, editor, ahead=self._ahead
        )
        self._materializer = Materializer(clients.store, clients.embedder, sink=publisher)
        self.metrics = clients.metrics.worker
        # The worker shares one between its partitions' editors (and its facts gauges).
        self.series = series or NamespaceSeries(
            self.metrics, worker.metrics_namespace_list, worker.metrics_busiest
        )
        self._ledger = Ledger()  # commits, by namespace and by document
        self._retrieval = Retrieval.from_settings(editor)
        # The facts the last commit (``handle``) changed, with their vectors; None: not
        # known (an attempt failed part way).
        self.changed: list[StoredFact] | None = []
        self._writes = 0  # writes under way (the changelog, the store, the dead letters)
        # Seconds the last commit spent per step (check, recheck, publish, apply...).
        self.steps: dict[str, float] = {}
        # The requests the last commit made, by kind (factstream/tally.py).
        self.requests: Tally = Counter()
        # Told a commit's facts once written, before its batch is recorded as applied (the
        # window pokes the later documents then); while set, the commit is counted then
        # (``commits``) rather than at its end. None: counted at the end, as one at a time.
        self.written: Callable[[str, list[StoredFact]], None] | None = None
        self._counted = False  # the commit under way counted already (``_facts_written``)

    @property
    def writing(self) -> bool:
        """Whether a commit is writing now: a rebalance lets it finish (agents/window.py);
        at any other moment a commit may be cancelled and made again, deciding afresh."""
        return self._writes > 0

    @contextlib.contextmanager
    def _write(self) -> Iterator[None]:
        self._writes += 1
        try:
            yield
        finally:
            self._writes -= 1

    def read_ahead(self, record: InputRecord) -> None:
        """Start embedding the record's document now, before its turn (bad input: nothing)."""
        try:
            doc = decode_document(record.key, record.value, max_bytes=self._max_bytes)
        except BadInput:
            return
        self._ahead.start(doc)
        if self._expect is not None:
            self._expect(doc.namespace)

    def commits(self, namespace: str) -> int:
        """Commits of ``namespace`` begun or done (what a decision's ``base`` counts)."""
        return self._ledger.count(namespace)

    def key(self, record: InputRecord) -> tuple[str, str] | None:
        """The record's (namespace, document id); None for bad input."""
        try:
            doc = decode_document(record.key, record.value, max_bytes=self._max_bytes)
        except BadInput:
            return None
        return doc.namespace, doc.id

    async def decide(
        self, record: InputRecord, recovered: RecoveredBatches, gate: WindowGate | None = None
    ) -> Decision:
        """Decide the record's document on the knowledge base as it stands; commit nothing.

        Bad input and documents already applied decide nothing (their commit says what
        they are); a document whose batch is on the changelog takes it and skips the LM.
        Errors are raised: the commit (``handle``) meets them and treats them as always.
        ``gate``: may hold the judgement back until earlier documents commit (its ``base``
        then counts the commits before the candidates it was judged on).
        """
        try:
            doc = decode_document(record.key, record.value, max_bytes=self._max_bytes)
        except BadInput:
            return Decision()
        base, serial = self._ledger.count(doc.namespace), self._ledger.serial
        if await self._clients.store.applied_batch(doc.namespace, doc.id) is not None:
            return Decision(base=base)
        batch = await recovered.take(doc.namespace, doc.id, record.appended_ms)
        if batch is not None:
            return Decision(recovered=batch, base=base, checked=serial)
        plan = await edit_document(doc, self._ctx, gate=gate)
        return Decision(plan, base=base if gate is None else gate.base, checked=serial)

    async def handle(
        self,
        record: InputRecord,
        recovered: RecoveredBatches,
        decided: Awaitable[Decision] | None = None,
    ) -> Outcome:
        """Process one record to its end, retrying through outages of Weaviate or Kafka.

        Args:
            record: The input record.
            recovered: The partition's batches found on the changelog.
            decided: Its early decision (``decide``), if one was started; its error, if it
                failed, is met here as if the record had been edited now.
        """
        outcome = await self._handle(record, recovered, decided)
        self.metrics.documents.labels(outcome=outcome.value).inc()
        return outcome

    async def _handle(
        self,
        record: InputRecord,
        recovered: RecoveredBatches,
        decided: Awaitable[Decision] | None,
    ) -> Outcome:
        self.changed, self.steps, self.requests = [], {}, Counter()
        with counting(self.requests):
            return await self._attempts(record, recovered, decided)

    async def _attempts(
        self,
        record: InputRecord,
        recovered: RecoveredBatches,
        decided: Awaitable[Decision] | None,
    ) -> Outcome:
        outages = failures = 0
        while True:
            try:
                early, decided = decided, None  # a retry decides afresh
                return await self._process(record, recovered, early)
            except ProducerFenced:
                # Another worker owns the partition now (this one was paused past its session
                # timeout, a zombie): it must neither publish nor decide again. Never retried.
                raise
            except _TRANSIENT as exc:  # an outage: wait as long as it lasts
                self.changed = None  # it may have applied part of a batch
                outages += 1
                delay = backoff_delay(outages, 0.5, 30.0)
                log.warning("%s: %r; retrying in %.1fs", _where(record), exc, delay)
            except Exception as exc:  # noqa: BLE001 - a poison message must not block forever
                # Never let it escape: faust acks the event of a crashed actor, which would
                # commit its offset and lose it. Retry a few times, then dead-letter it.
                self.changed = None
                failures += 1
                if failures >= _POISON_ATTEMPTS:
                    reason = f"failed {failures} times: {exc!r}"
                    return await self._dead_letter(record, reason, type(exc).__name__)
                delay = backoff_delay(failures, 0.5, 30.0)
                log.exception("%s failed; retrying in %.1fs", _where(record), delay)
            await asyncio.sleep(delay)

    async def _process(
        self,
        record: InputRecord,
        recovered: RecoveredBatches,
        early: Awaitable[Decision] | None,
    ) -> Outcome:
        try:
            doc = decode_document(record.key, record.value, max_bytes=self._max_bytes)
        except BadInput as exc:
            return await self._dead_letter(record, exc.reason, "BadInput")
        try:
            decision = None
            if early is not None:
                # The committer waiting for the decision (not the commit's own time).
                with timed(self.steps, "wait_decision"):
                    decision = await early
            try:
                # The new facts' vectors, computed beside the re-check and the transaction.
                with FactVectors(self._clients.embedder, _new_texts(decision)) as ahead:
                    return await self._edit(doc, record, recovered, decision, ahead)
            finally:
                # Whatever it wrote, if anything, decisions begun before now may not have seen
                # (unless counted as its facts were written, and nothing failed since).
                if not self._counted:
                    self._ledger.record(doc.namespace, doc.id)
                self._counted = False
                self._ahead.drop(doc)  # not decided (a duplicate, recovered): not needed
        except LMOutputInvalid as exc:
            return await self._dead_letter(record, f"LM output invalid: {exc}", "LMOutputInvalid")

    async def _edit(
        self,
        doc: Document,
        record: InputRecord,
        recovered: RecoveredBatches,
        decision: Decision | None,
        ahead: FactVectors,
    ) -> Outcome:
        steps = self.steps
        if not self._unchanged_since(doc, decision):
            with timed(steps, "check"):
                applied = await self._clients.store.applied_batch(doc.namespace, doc.id)
            if applied is not None:
                return Outcome.DUPLICATE
        batch = decision.recovered if decision is not None else None
        if batch is None:
            batch = await recovered.take(doc.namespace, doc.id, record.appended_ms)
        if batch is not None:
            with self._write():
                self._changed((await self._materializer.apply(batch, steps, unapplied=True)).stored)
            return Outcome.RECOVERED
        plan, touched = await self._confirmed(doc, record.source, decision)
        try:
            return await self._commit(doc, record, recovered, plan, ahead, touched)
        finally:
            if touched is not None:
                touched.cancel()  # not taken (review, nothing to change, an error): unused

    async def _commit(
        self,
        doc: Document,
        record: InputRecord,
        recovered: RecoveredBatches,
        plan: EditPlan,
        ahead: FactVectors,
        touched: Awaitable[dict[str, StoredFact]] | None,
    ) -> Outcome:
        steps = self.steps
        problem = bound_problem(plan, self._max_edits, subject_check=self._subject_check)
        if problem is not None:
            log.warning("review %s: document %r %s", _where(record), doc.id, problem)
            with self._write():
                await self._publisher.review(doc)
                await self._materializer.record_empty(doc.namespace, doc.id)
            return Outcome.REVIEW
        edits = to_records(plan, record.source)
        if not edits:
            with self._write(), timed(steps, "record_empty"):
                await self._materializer.record_empty(doc.namespace, doc.id)
            return Outcome.EMPTY
        with self._write():
            pending = await self._prepared(edits, steps, plan.timings, touched)
            # The batch and the new states of the facts it changes in one transaction.
            with timed(plan.timings, "publish"), timed(steps, "publish"):
                await self._publisher.publish_batch(
                    edits, () if pending is None else pending.changed
                )
            try:
                with timed(plan.timings, "apply"):
                    if pending is None:  # the read failed: read, write and publish states now
                        done = await self._materializer.apply(
                            edits, steps, unapplied=True, ahead=ahead
                        )
                    else:
                        done = await self._materializer.write(
                            pending,
                            steps,
                            ahead=ahead,
                            published=True,
                            written=None if self.written is None else self._facts_written(doc),
                        )
                    self._changed(done.stored)
            except BaseException:
                # The batch is on the changelog now: a retry applies it, never decides again.
                recovered.keep(edits)
                self._counted = False  # counted again at the end: what follows may differ
                raise
        for stage, seconds in plan.timings.items():
            self.metrics.stages.labels(stage=stage).observe(seconds)
        self.series.edited(doc.namespace, [edit.op for edit in edits])
        return Outcome.APPLIED

    async def _prepared(
        self,
        edits: list[FactEdit],
        steps: dict[str, float],
        timings: dict[str, float],
        touched: Awaitable[dict[str, StoredFact]] | None = None,
    ) -> Pending | None:
        """The batch folded into the facts as stored, before it is published (its fact states
        then go in its transaction); None if the store's read failed. Then the batch is
        published anyway, alone, as before the fold existed: once on the changelog it is
        applied on retry, never decided again (an outage after the decision). ``touched``:
        the read of the facts it touches, begun beside the check of its candidates."""
        try:
            with timed(timings, "apply"):
                return await self._materializer.prepare(
                    edits, steps, unapplied=True, touched=touched
                )
        except Exception as exc:  # noqa: BLE001 - the apply after the publish meets it again
            log.warning("read before publishing %s failed: %r", edits[0].document_id, exc)
            return None

    def _unchanged_since(self, doc: Document, decision: Decision | None) -> bool:
        """Whether ``decision`` found the document not applied and no commit of the
        document was counted since (agents/ledger.py): then it is not applied now either,
        and its commit need not read the store again, so an outage that begins after the
        decision meets it only once its batch is published."""
        if decision is None or decision.checked is None:
            return False
        return self._ledger.committed_since(doc.namespace, doc.id, decision.checked) is False

    async def _confirmed(
        self, doc: Document, source: InputRef, decision: Decision | None
    ) -> tuple[EditPlan, asyncio.Task[dict[str, StoredFact]] | None]:
        """The plan serial processing makes: the early one if its candidates still stand.

        With a plan its check confirmed, the read of the facts its batch touches, begun
        beside the check: both read the store as every earlier commit of the namespace left
        it, and nothing is written between them (the commits of a partition go one at a
        time), so the read is the one made after the check, one round trip sooner."""
        if decision is None or decision.plan is None:
            return await edit_document(doc, self._ctx), None
        plan = decision.plan
        if self._ledger.count(doc.namespace) == decision.base or plan.vector is None:
            # Nothing was committed in its namespace since it retrieved (or, a baseline
            # method, it retrieved nothing): it saw what it would see now.
            return plan, None
        edits = to_records(plan, source)
        touched = _started(self._materializer.read_touched(edits)) if edits else None
        try:
            with timed(self.steps, "recheck"):
                _, now = await self.probe(plan, plan.timings)
            reason = conflict(plan.retrieved, now, doc.timestamp)
        except BaseException:
            if touched is not None:
                touched.cancel()
            raise
        if reason is None:
            return plan, touched
        if touched is not None:
            touched.cancel()  # another plan touches other facts: it reads them itself
        with timed(self.steps, "redecide"):
            return await self.redecide(plan, now, reason, "commit"), None

    def _facts_written(self, doc: Document) -> Callable[[list[StoredFact]], None]:
        """What a commit of ``doc`` does once its facts are written, before its batch is
        recorded: count the commit now and tell ``written``. The facts collection then holds
        every write of the batch (the applied record goes to the other collection), so a
        retrieval from now on sees what it would see after the commit; a decision that
        retrieves now, with this count as its ``base``, needs no check at its commit. An
        error after this point counts the commit again at its end (``_process``), so such a
        decision is checked after all."""

        def written(stored: list[StoredFact]) -> None:
            self._ledger.record(doc.namespace, doc.id)
            self._counted = True
            if self.written is not None:
                self.written(doc.namespace, stored)

        return written

    def _changed(self, stored: list[StoredFact]) -> None:
        if self.changed is not None:  # after a failed attempt it stays unknown
            self.changed = stored

    def could_change(
        self, plan: EditPlan, seen: Sequence[SearchHit], changed: Sequence[StoredFact]
    ) -> bool:
        """Whether facts a commit ``changed`` may change the candidates ``seen`` of ``plan``'s
        document (a cheap test that decides when to retrieve again early; see
        ``retrieval.could_change``)."""
        if plan.vector is None:
            return False
        doc = plan.document
        title = document_title(doc.title, doc.source)
        return could_change(seen, doc.text, plan.queries, changed, self._retrieval, title)

    async def embed(self, texts: list[str]) -> list[Vector]:
        """The vectors of ``texts`` (facts an earlier document plans: agents/dependencies.py)."""
        return await self._clients.embedder.embed_batch(texts)

    async def probe(
        self, plan: EditPlan, timings: dict[str, float] | None = None
    ) -> tuple[int, list[SearchHit]]:
        """``plan``'s document's candidates on the knowledge base as it stands now, with the
        commits of its namespace counted before they were retrieved (a decision's ``base``).
        """
        doc = plan.document
        assert plan.vector is not None  # noqa: S101 - only plans that retrieved are probed
        base = self._ledger.count(doc.namespace)
        vectors = plan.queries or [plan.vector]
        now = await retrieve(doc, self._ctx, {} if timings is None else timings, vectors)
        return base, now

    async def predict(self, plan: EditPlan, overlay: Overlay) -> tuple[int, list[SearchHit]] | None:
        """``plan``'s document's candidates on the knowledge base as predicted (as it stands
        now, with ``overlay``: what earlier documents in flight will write and end), with the
        commits counted before; None where the ranking cannot be predicted (not the cosine
        rerank of a first stage)."""
        how = self._retrieval
        if plan.vector is None or how.rank != "cosine" or not how.first_stage:
            return None
        doc = plan.document
        base = self._ledger.count(doc.namespace)
        now = await retrieve(doc, self._ctx, {}, plan.queries or [plan.vector], overlay)
        return base, now

    async def redecide(
        self, plan: EditPlan, now: list[SearchHit], reason: Conflict, at: Literal["early", "commit"]
    ) -> EditPlan:
        """``plan``'s document decided again on the candidates ``now``, keeping its embedding
        and extraction; counted as a re-decision for ``reason`` made ``at`` (early: before
        its commit turn), with the LM tokens it spent.
        """
        doc = plan.document
        log.info("decide %r again: candidates %s since its decision (%s)", doc.id, reason.value, at)
        self.metrics.redecisions.labels(reason=reason.value, at=at).inc()
        again = await edit_document(doc, self._ctx, retrieved=now, reuse=plan)
        for task, usage in again.usage.items():
            self.metrics.redecision_tokens.labels(task=task).inc(usage.total_tokens)
        changed = _outcome(again) != _outcome(plan)
        self.metrics.window_outcomes.labels(step=at, changed=str(changed).lower()).inc()
        return again

    async def _dead_letter(self, record: InputRecord, reason: str, error_type: str) -> Outcome:
        src = record.source
        log.warning("dead letter %s: %s", _where(record), reason)
        self.metrics.dead_letters.labels(error_type=error_type).inc()
        with self._write():
            await self._publisher.dead_letter(
                topic=src.topic,
                partition=src.partition,
                offset=src.offset,
                key=record.key,
                value=record.value,
                reason=reason,
                error_type=error_type,
            )
        return Outcome.DEAD_LETTER
