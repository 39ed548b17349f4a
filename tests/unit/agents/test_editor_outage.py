"""The editor through a fact-store outage that strikes after a batch is on the changelog."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime

from fixtures.decisions import Decisions

from factstream.agents.editor import Editor, InputRecord, Outcome
from factstream.clients import Clients
from factstream.config import Settings
from factstream.embed.fake import HashingEmbedder
from factstream.errors import StoreUnavailable
from factstream.lm.base import CompletionRequest
from factstream.lm.fake import ScriptedLM
from factstream.metrics import Metrics
from factstream.store.base import StoredFact
from factstream.store.memory import InMemoryFactStore
from factstream.streams.recovery import RecoveredBatches
from factstream.tasks.runner import TaskRunner
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

    async def publish_batch(self, edits: Sequence[FactEdit]) -> None:
        self.batches.append(list(edits))

    async def publish_facts(self, facts: Sequence[Fact]) -> None:
        return None


async def _nothing_yet(since_ms: int) -> AsyncIterator[FactEdit]:
    for edit in ():
        yield edit


async def test_a_batch_whose_applying_failed_is_applied_on_retry_without_the_lm() -> None:
    decisions = Decisions(extract={"[doc-1]": ["The ferry runs again."]})

    def reply(request: CompletionRequest) -> str:
        return decisions.answer(request.prompt, request.messages[-1].content)

    lm, store, changelog = ScriptedLM([reply] * 10), StoreDownOnce(), Changelog()
    settings = Settings()
    clients = Clients(Metrics.create(), store, HashingEmbedder(), lm, TaskRunner(lm))
    editor = Editor(clients, changelog, settings.editor, settings.worker)  # type: ignore[arg-type]
    document = Document(
        id="doc-1",
        namespace="desk",
        kind="article",
        timestamp=datetime(2024, 3, 1, tzinfo=UTC),
        text="[doc-1] The ferry resumed service.",  # type: ignore[arg-type]
    )
    record = InputRecord(
        key=b"desk",
        value=document.to_bytes(),
        source=InputRef(topic="factstream.documents", partition=0, offset=0),
        appended_ms=0,
    )

    outcome = await editor.handle(record, RecoveredBatches(settings.kafka, _nothing_yet))

    assert store.failed and outcome is Outcome.RECOVERED
    assert len(lm.requests) == 1  # decided once: the retry applied the published batch
    [batch] = changelog.batches
    facts = (await store.list_facts("desk")).facts
    assert [(f.text, f.history[0].edit_id) for f in facts] == [
        ("The ferry runs again.", batch[0].edit_id)
    ]
    assert (await store.applied_batch("desk", "doc-1")) is not None
