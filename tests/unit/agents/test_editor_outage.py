"""The editor through a fact-store outage that strikes after a batch is on the changelog."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import Any

from fixtures.decisions import Decisions
from fixtures.recording import TextRecorder

from factstream.agents.editor import Decision, Editor, InputRecord, Outcome
from factstream.clients import Clients
from factstream.config import Settings
from factstream.embed.fake import HashingEmbedder
from factstream.errors import StoreUnavailable
from factstream.lm.base import CompletionRequest
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.metrics import Metrics
from factstream.store.base import StoredFact
from factstream.store.memory import InMemoryFactStore
from factstream.streams.recovery import RecoveredBatches
from factstream.topics.records import Document, Fact, FactEdit, InputRef


class StoreDownOnce(InMemoryFactStore):
    """Its first write fails as if Weaviate had just gone away."""

    def __init__(self) -> None:
        super().__init__()
        self.failed = False

    async def upsert(self, namespace: str, facts: Sequence[StoredFact]) -> None:
        if not self.failed:
            self.failed = True
            raise StoreUnavailable("http://weaviate", "connection refused")
        await super().upsert(namespace, facts)


class Changelog:
    """The publisher's side the editor uses, kept in memory."""

    def __init__(self) -> None:
        self.batches: list[list[FactEdit]] = []
        self.with_batches: list[list[Fact]] = []  # fact states sent in a batch's transaction
        self.alone: list[list[Fact]] = []  # fact states sent in a transaction of their own

    async def publish_batch(self, edits: Sequence[FactEdit], facts: Sequence[Fact] = ()) -> None:
        self.batches.append(list(edits))
        self.with_batches.append(list(facts))

    async def publish_facts(self, facts: Sequence[Fact]) -> None:
        self.alone.append(list(facts))


async def _nothing_yet(since_ms: int) -> AsyncIterator[FactEdit]:
    for edit in ():
        yield edit


def _editor(
    store: InMemoryFactStore, changelog: Changelog | None = None, embedder: Any = None
) -> tuple[Editor, ScriptedLM, Changelog, RecoveredBatches]:
    """An editor on ``store`` whose scripted LM extracts one fact from doc-1."""
    decisions = Decisions(extract={"[doc-1]": ["The ferry runs again."]})

    def reply(request: CompletionRequest) -> str:
        return decisions.answer(request.prompt, request.messages[-1].content)

    lm, settings = ScriptedLM([reply] * 10), Settings()
    changelog = changelog or Changelog()
    embedder = embedder or HashingEmbedder()
    clients = Clients(Metrics.create(), store, embedder, lm, TaskRunner(lm))
    editor = Editor(clients, changelog, settings.editor, settings.worker)  # type: ignore[arg-type]
    return editor, lm, changelog, RecoveredBatches(settings.kafka, _nothing_yet)


def _record(document_id: str = "doc-1", offset: int = 0) -> InputRecord:
    document = Document(
        id=document_id,
        namespace="desk",
        kind="article",
        timestamp=datetime(2024, 3, 1, tzinfo=UTC),
        text=f"[{document_id}] The ferry resumed service.",  # type: ignore[arg-type]
    )
    return InputRecord(
        key=b"desk",
        value=document.to_bytes(),
        source=InputRef(topic="factstream.documents", partition=0, offset=offset),
        appended_ms=0,
    )


async def test_a_batch_whose_applying_failed_is_applied_on_retry_without_the_lm() -> None:
    store = StoreDownOnce()
    editor, lm, changelog, recovered = _editor(store)
    outcome = await editor.handle(_record(), recovered)

    assert store.failed and outcome is Outcome.RECOVERED
    assert len(lm.requests) == 1  # decided once: the retry applied the published batch
    [batch] = changelog.batches
    facts = (await store.list_facts("desk")).facts
    assert [(f.text, f.history[0].edit_id) for f in facts] == [
        ("The ferry runs again.", batch[0].edit_id)
    ]
    assert (await store.applied_batch("desk", "doc-1")) is not None


class StoreDownAfterDecision(InMemoryFactStore):
    """Up while a document is decided; then its next ``failures`` reads of applied
    batches and writes fail as if Weaviate had gone away."""

    def __init__(self) -> None:
        super().__init__()
        self.failures = 0

    def _maybe_down(self) -> None:
        if self.failures > 0:
            self.failures -= 1
            raise StoreUnavailable("http://weaviate", "connection refused")

    async def applied_batch(self, namespace: str, document_id: str) -> Any:
        self._maybe_down()
        return await super().applied_batch(namespace, document_id)

    async def upsert(self, namespace: str, facts: Sequence[StoredFact]) -> None:
        self._maybe_down()
        await super().upsert(namespace, facts)


async def test_an_early_decision_is_published_though_the_store_went_down_after_it() -> None:
    """Nothing was committed in its namespace since the document was decided (and found
    not applied): its commit publishes without reading the store again, so an outage that
    begins after the decision cannot send it to the LM again (issue 25's restart test)."""
    store = StoreDownAfterDecision()
    editor, lm, changelog, recovered = _editor(store)
    record = _record()

    decision = await editor.decide(record, recovered)
    calls = len(lm.requests)
    store.failures = 2  # Weaviate goes away once the LM has decided

    async def decided() -> Decision:
        return decision

    outcome = await editor.handle(record, recovered, decided())

    assert store.failures == 0 and outcome is Outcome.RECOVERED
    assert len(lm.requests) == calls  # never decided again: its batch was on the changelog
    [batch] = changelog.batches
    facts = (await store.list_facts("desk")).facts
    assert [(f.text, f.history[0].edit_id) for f in facts] == [
        ("The ferry runs again.", batch[0].edit_id)
    ]


class CountingReads(InMemoryFactStore):
    """Counts the reads of applied batches."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    async def applied_batch(self, namespace: str, document_id: str) -> Any:
        self.reads += 1
        return await super().applied_batch(namespace, document_id)


async def _decided(decision: Decision) -> Decision:
    return decision


async def test_a_commit_after_other_documents_of_its_namespace_reads_no_applied_batch() -> None:
    """Issue 18: a document found not applied at its decision is not applied at its commit
    unless a copy of it committed since; other documents' commits do not make its commit
    read the store (neither the editor's check nor the apply's)."""
    store = CountingReads()
    editor, _, changelog, recovered = _editor(store)
    record = _record()
    decision = await editor.decide(record, recovered)
    other = await editor.handle(_record("doc-2", offset=1), recovered)
    assert other is Outcome.EMPTY  # a commit of the namespace since the decision
    reads = store.reads

    outcome = await editor.handle(record, recovered, _decided(decision))

    assert outcome is Outcome.APPLIED and store.reads == reads
    assert len(changelog.batches) == 1
    assert await store.applied_batch("desk", "doc-1") is not None


async def test_a_commit_after_a_copy_of_its_document_committed_finds_it_applied() -> None:
    store = CountingReads()
    editor, _, changelog, recovered = _editor(store)
    record = _record()
    decision = await editor.decide(record, recovered)
    assert await editor.handle(_record(offset=1), recovered) is Outcome.APPLIED

    outcome = await editor.handle(record, recovered, _decided(decision))

    assert outcome is Outcome.DUPLICATE and len(changelog.batches) == 1


class SlowChangelog(Changelog):
    """Its transactions take a moment; it notes what was embedded when each ended."""

    def __init__(self, embedder: TextRecorder) -> None:
        super().__init__()
        self.embedder = embedder
        self.embedded: list[list[str]] = []

    async def publish_batch(self, edits: Sequence[FactEdit], facts: Sequence[Fact] = ()) -> None:
        await asyncio.sleep(0.05)
        self.embedded.append(list(self.embedder.texts))
        await super().publish_batch(edits, facts)


async def test_a_commit_embeds_its_new_facts_beside_its_kafka_transaction() -> None:
    """Issue 18: the vectors of the facts a decided plan adds are computed as its commit
    begins, not after its batch is on the changelog; the apply takes them."""
    embedder = TextRecorder()
    changelog = SlowChangelog(embedder)
    editor, _, _, recovered = _editor(InMemoryFactStore(), changelog, embedder)
    record = _record()
    decision = await editor.decide(record, recovered)
    assert "The ferry runs again." not in embedder.texts

    assert await editor.handle(record, recovered, _decided(decision)) is Outcome.APPLIED

    assert "The ferry runs again." in changelog.embedded[0]
    assert embedder.texts.count("The ferry runs again.") == 1


async def test_a_commit_sends_its_fact_states_in_its_batch_s_transaction() -> None:
    """Issue 37: one Kafka transaction a document. The new fact states go out with the
    batch, not in a transaction of their own after the store's write; a batch applied on
    retry (the store failed after the batch was published) still publishes them itself."""
    editor, _, changelog, recovered = _editor(InMemoryFactStore())

    assert await editor.handle(_record(), recovered) is Outcome.APPLIED

    [batch], [states] = changelog.batches, changelog.with_batches
    assert [(f.fact_id, f.text) for f in states] == [(batch[0].fact_id, "The ferry runs again.")]
    assert changelog.alone == []

    store = StoreDownOnce()
    editor, _, changelog, recovered = _editor(store)
    assert await editor.handle(_record(), recovered) is Outcome.RECOVERED
    [states] = changelog.with_batches
    assert [f.text for f in states] == ["The ferry runs again."]
    assert [[f.text for f in facts] for facts in changelog.alone] == [["The ferry runs again."]]


class ReadDownAfterDecision(InMemoryFactStore):
    """Up while a document is decided; then its next ``failures`` reads of stored facts
    fail as if Weaviate had gone away."""

    def __init__(self) -> None:
        super().__init__()
        self.failures = 0

    async def get_stored(self, namespace: str, fact_ids: Sequence[str]) -> Any:
        if self.failures > 0:
            self.failures -= 1
            raise StoreUnavailable("http://weaviate", "connection refused")
        return await super().get_stored(namespace, fact_ids)


async def test_a_read_failing_before_the_publish_does_not_decide_again() -> None:
    """The commit folds the batch into the stored facts before its transaction; when that
    read fails the batch is published alone all the same, and the retry applies it (with
    its fact states) without asking the LM again."""
    store = ReadDownAfterDecision()
    editor, lm, changelog, recovered = _editor(store)
    record = _record()
    decision = await editor.decide(record, recovered)
    asked = len(lm.requests)
    store.failures = 2  # the read before the publish, and the apply's after it

    assert await editor.handle(record, recovered, _decided(decision)) is Outcome.RECOVERED

    assert len(lm.requests) == asked
    [batch] = changelog.batches
    assert changelog.with_batches == [[]]
    assert [[f.text for f in facts] for facts in changelog.alone] == [["The ferry runs again."]]
    facts = (await store.list_facts("desk")).facts
    assert [(f.text, f.history[0].edit_id) for f in facts] == [
        ("The ferry runs again.", batch[0].edit_id)
    ]
