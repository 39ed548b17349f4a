"""The window: documents of a partition decided at once, committed in order, as W = 1 would."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fixtures.decisions import Decisions
from fixtures.slow_lm import SlowLM

from factstream.agents.dependencies import Policy
from factstream.agents.editor import Editor, InputRecord, Outcome
from factstream.agents.window import Window
from factstream.clients import Clients
from factstream.config import EditorSettings, Settings
from factstream.embed.fake import HashingEmbedder
from factstream.lm.tasks.runner import TaskRunner
from factstream.metrics import Metrics
from factstream.store.memory import InMemoryFactStore
from factstream.streams.recovery import RecoveredBatches
from factstream.tally import current
from factstream.topics.records import Document, Fact, FactEdit, InputRef

NS = "desk"
T0 = datetime(2024, 3, 1, tzinfo=UTC)


@dataclass
class Publisher:
    """The publisher's side the editor uses, in memory."""

    batches: list[list[FactEdit]] = field(default_factory=list)
    dead: list[tuple[int, str]] = field(default_factory=list)  # (offset, error type)
    reviewed: list[str] = field(default_factory=list)

    async def publish_batch(self, edits: Sequence[FactEdit], facts: Sequence[Fact] = ()) -> None:
        self.batches.append(list(edits))

    async def publish_facts(self, facts: Sequence[Fact]) -> None:
        return None

    async def review(self, document: Document) -> None:
        self.reviewed.append(document.id)

    async def dead_letter(self, *, offset: int, error_type: str, **_: Any) -> None:
        self.dead.append((offset, error_type))

    def comparable(self) -> list[list[dict[str, Any]]]:
        """The batches without their processing time."""
        return [
            [e.model_dump(mode="json", exclude={"created_at"}) for e in b] for b in self.batches
        ]


def document(i: int, text: str | None = None, doc_id: str | None = None) -> bytes:
    return Document(
        id=doc_id or f"d{i}",
        namespace=NS,
        kind="article",
        timestamp=T0 + timedelta(days=i),
        text=text or f"[d{i}] The mayor is now person {i}; line {i} opened.",  # type: ignore[arg-type]
    ).to_bytes()


def conflicting(count: int) -> tuple[list[bytes], Decisions]:
    """Documents about one subject back to back: each ends the mayor the one before named."""
    extract: dict[str, list[Any]] = {
        f"[d{i}]": [f"The mayor is person {i}.", f"Line {i} is open."] for i in range(count)
    }
    decisions = Decisions(
        extract=extract, outdated={"mayor is": None}, reinforce={"Line"}, whole_prompt=True
    )
    return [document(i) for i in range(count)], decisions


class TextRecorder(HashingEmbedder):
    """The hashing double, remembering the texts of each call in order."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    async def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts += texts
        return await super().embed_batch(texts)


class Run:
    """One partition's worker in process: in-memory store, slow scripted LM, a window."""

    def __init__(
        self,
        decisions: Decisions,
        window: int,
        *,
        on_changelog: Sequence[FactEdit] = (),
        lookahead: int | None = None,
        dependencies: Policy | None = None,
        store: InMemoryFactStore | None = None,
        **lm: Any,
    ) -> None:
        self.store, self.publisher = store or InMemoryFactStore(), Publisher()
        self.lm = SlowLM(decisions, 0.01, **lm)
        self.metrics = Metrics.create()
        self.embedder = TextRecorder()
        runner = TaskRunner(self.lm, metrics=self.metrics.lm)
        clients = Clients(self.metrics, self.store, self.embedder, self.lm, runner)
        editor = EditorSettings(min_similarity=-1.0, window=window)
        self.editor = Editor(clients, self.publisher, editor, Settings().worker)  # type: ignore[arg-type]
        self.reads: list[int] = []

        async def read(since_ms: int) -> AsyncIterator[FactEdit]:
            self.reads.append(since_ms)
            for edit in on_changelog:
                yield edit

        self.recovered = RecoveredBatches(Settings().kafka, read)
        self.window: Window[int] = Window(
            self.editor,
            self.recovered,
            window,
            partition=0,
            lookahead=lookahead,
            dependencies=dependencies,
        )
        self.outcomes: list[tuple[int, Outcome]] = []
        self.values: list[bytes | None] = []

    def record(self, offset: int) -> InputRecord:
        source = InputRef(topic="factstream.documents", partition=0, offset=offset)
        return InputRecord(key=NS.encode(), value=self.values[offset], source=source, appended_ms=0)

    async def committed(self, offset: int, record: InputRecord, outcome: Outcome) -> None:
        assert record.source.offset == offset
        self.outcomes.append((offset, outcome))

    async def feed(self, values: list[bytes | None]) -> None:
        self.values = values

        async def events() -> AsyncIterator[int]:
            for offset in range(len(values)):
                yield offset

        await asyncio.wait_for(self.window.run(events(), self.record, self.committed), 60)

    def sample(self, name: str, **labels: str) -> float:
        return self.metrics.registry.get_sample_value(name, labels) or 0.0


async def _same_as_serial(
    decisions: Decisions, values: Sequence[bytes | None], window: int, **options: Any
) -> tuple[Run, Run]:
    """The values fed one at a time and through a window of ``window``: the same outcomes,
    changelog and knowledge base; returns both runs (serial first)."""
    serial, windowed = Run(decisions, 1), Run(decisions, window, **options)
    await serial.feed(list(values))
    await windowed.feed(list(values))
    assert windowed.outcomes == serial.outcomes
    assert windowed.publisher.comparable() == serial.publisher.comparable()
    assert await windowed.store.list_facts(NS, include_false=True, limit=1000) == (
        await serial.store.list_facts(NS, include_false=True, limit=1000)
    )
    return serial, windowed


async def test_a_window_of_eight_commits_in_order_what_one_at_a_time_commits() -> None:
    values, decisions = conflicting(16)
    serial, windowed = await _same_as_serial(decisions, values, 8)

    assert serial.outcomes == [(i, Outcome.APPLIED) for i in range(16)]
    assert serial.lm.most <= 2  # one document at a time: its classification and extraction
    assert windowed.lm.most > 2  # several documents' calls at once
    # Each document decided before the one before it committed missed its mayor: decided
    # again as soon as a commit changed its candidates, not at its own turn.
    assert windowed.sample("factstream_redecisions_total", reason="added", at="early") > 0
    assert serial.metrics.registry.get_sample_value("factstream_redecisions_total") is None
    assert windowed.sample("factstream_redecision_tokens_total", task="classify") > 0
    # Every finished re-decision is counted by whether its plan differs from the one it
    # replaces (a stale one cancelled is not: it has no plan).
    outcomes = "factstream_window_outcomes_total"
    for at in ("early", "commit"):
        counted = sum(windowed.sample(outcomes, step=at, changed=c) for c in ("true", "false"))
        assert counted <= windowed.sample("factstream_redecisions_total", reason="added", at=at)
    assert windowed.sample(outcomes, step="early", changed="true") > 0  # a new mayor ends
    assert windowed.sample("factstream_redecision_tokens_total", task="extract") == 0
    # A re-decision keeps its extraction: one extraction per document, as one at a time.
    assert windowed.lm.tasks().count("extract_facts") == 16
    assert serial.lm.tasks().count("extract_facts") == 16
    assert windowed.sample("factstream_documents_in_flight", partition="0") == 0


async def test_documents_decided_on_the_predicted_knowledge_base_commit_the_serial_result() -> None:
    # Each document ends the mayor the one before it names: with ``predict`` it waits for
    # that document's decision, not its commit, and is judged on the knowledge base its
    # plan will leave; the commit's check finds what the LM was shown unchanged.
    values, decisions = conflicting(16)
    _, predicted = await _same_as_serial(decisions, values, 8, dependencies="predict")
    waits = "factstream_dependency_waits_total"
    assert predicted.sample(waits, on="predicted") >= 8  # decided before the commit
    assert predicted.sample(waits, on="depends") < 8
    again = sum(
        predicted.sample("factstream_redecisions_total", reason=r, at=at)
        for r in ("added", "removed", "changed", "reordered")
        for at in ("early", "commit")
    )
    assert again <= 2, again  # the predictions held: decided once
    assert predicted.lm.most > 2  # several documents' calls at once


async def test_documents_decided_on_earlier_extractions_commit_the_serial_result() -> None:
    # With ``draft`` a document waits for the judgement of an earlier document it depends
    # on only where that judgement may end one of its candidates (it may end only its
    # own): here each document ends the mayor the one before it names, a candidate of
    # both, so it waits as with ``predict`` and is decided about once.
    values, decisions = conflicting(16)
    serial, drafted = await _same_as_serial(decisions, values, 8, dependencies="draft")
    waits = "factstream_dependency_waits_total"
    again = sum(
        drafted.sample("factstream_redecisions_total", reason=r, at=at)
        for r in ("added", "removed", "changed", "reordered")
        for at in ("early", "commit")
    )
    assert again <= 2, again  # the judgements that mattered were waited for
    assert drafted.sample(waits, on="judgement") > 0
    assert drafted.sample(waits, on="predicted") >= 8
    assert drafted.lm.most > 2


@pytest.mark.parametrize("policy", ["speculate", "extraction", "wait"])
async def test_predicted_dependencies_decide_each_document_once(policy: Policy) -> None:
    values, decisions = conflicting(16)
    serial, predicted = await _same_as_serial(decisions, values, 8, dependencies=policy)
    waits = predicted.sample("factstream_dependency_waits_total", on="depends")
    if policy == "speculate":  # the first ones judged before any earlier plan was known
        assert 0 < waits < 16
        return
    # Each document ends the mayor the one before it named: it waited for that commit and
    # was decided once, as one at a time.
    assert waits == 15
    # Each wait was for the mayor the one before named: it changed the candidates judged.
    outcomes = "factstream_window_outcomes_total"
    assert predicted.sample(outcomes, step="wait", changed="true") >= 15
    assert predicted.sample("factstream_dependency_distance_count") == 15
    assert predicted.sample("factstream_dependency_distance_bucket", le="1.0") == 15
    assert predicted.lm.tasks().count("classify_facts") == serial.lm.tasks().count("classify_facts")
    for at in ("early", "commit"):
        assert predicted.sample("factstream_redecisions_total", reason="added", at=at) == 0
    assert predicted.lm.most > 2  # the extractions overlap


async def test_a_short_lookahead_decides_again_less_and_commits_the_same() -> None:
    values, decisions = conflicting(16)
    serial, near, every = Run(decisions, 1), Run(decisions, 8, lookahead=1), Run(decisions, 8)
    for run in (serial, near, every):
        await run.feed(list(values))
    assert near.publisher.comparable() == every.publisher.comparable()
    assert near.publisher.comparable() == serial.publisher.comparable()
    early = "factstream_redecisions_total"
    # Only the next document is decided again at once: each document once, not at every
    # commit before its turn.
    assert (
        0
        < near.sample(early, reason="added", at="early")
        < every.sample(early, reason="added", at="early")
    )
    assert len(near.lm.spans) < len(every.lm.spans)


async def test_bad_input_and_invalid_lm_output_are_dead_lettered_in_order() -> None:
    values, decisions = conflicting(10)
    mixed: list[bytes | None] = list(values)
    mixed[2] = b"{not json"
    mixed[5] = None
    serial, windowed = Run(decisions, 1, garbage=("[d7]",)), Run(decisions, 8, garbage=("[d7]",))
    await serial.feed(list(mixed))
    await windowed.feed(list(mixed))
    assert [o for _, o in windowed.outcomes] == [o for _, o in serial.outcomes]
    assert [offset for offset, _ in windowed.outcomes] == list(range(10))
    dead = [(2, "BadInput"), (5, "BadInput"), (7, "LMOutputInvalid")]
    assert windowed.publisher.dead == serial.publisher.dead == dead
    assert windowed.publisher.comparable() == serial.publisher.comparable()


async def test_a_second_copy_of_a_document_in_flight_waits_and_never_reaches_the_lm() -> None:
    values, decisions = conflicting(4)
    run = Run(decisions, 8)
    await run.feed([values[0], values[1], values[1], values[2], values[1]])
    assert [o for _, o in run.outcomes] == [
        Outcome.APPLIED,
        Outcome.APPLIED,
        Outcome.DUPLICATE,
        Outcome.APPLIED,
        Outcome.DUPLICATE,
    ]
    alone = Run(decisions, 8)
    await alone.feed([values[0], values[1], values[2]])
    assert run.lm.calls("[d1]") == alone.lm.calls("[d1]") > 0  # the copies never reached it


async def test_an_error_of_a_commit_ends_the_run_and_nothing_after_it_commits() -> None:
    values, decisions = conflicting(6)
    run = Run(decisions, 4)

    async def fails(offset: int, record: InputRecord, outcome: Outcome) -> None:
        run.outcomes.append((offset, outcome))
        if offset == 2:
            raise RuntimeError("the consumer is gone")

    run.committed = fails  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="consumer is gone"):
        await run.feed(list(values))
    assert [offset for offset, _ in run.outcomes] == [0, 1, 2]


async def test_batches_on_the_changelog_are_applied_without_the_lm_anywhere_in_the_window() -> None:
    values, decisions = conflicting(6)
    serial = Run(decisions, 1)
    await serial.feed(list(values))
    # A worker published the batches of d0..d3 and died before applying or committing any.
    published = [edit for batch in serial.publisher.batches[:4] for edit in batch]
    restarted = Run(decisions, 8, on_changelog=published)
    await restarted.feed(list(values))
    assert [o for _, o in restarted.outcomes] == [Outcome.RECOVERED] * 4 + [Outcome.APPLIED] * 2
    assert restarted.reads == [0]  # the changelog read once, from the oldest document
    assert all(restarted.lm.calls(f"[d{i}]") == 0 for i in range(4))
    assert restarted.publisher.comparable() == serial.publisher.comparable()[4:]
    assert await restarted.store.list_facts(NS, include_false=True, limit=1000) == (
        await serial.store.list_facts(NS, include_false=True, limit=1000)
    )


async def test_an_outage_while_reading_the_changelog_is_waited_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    values, decisions = conflicting(3)
    run = Run(decisions, 4)
    failures = [ConnectionError("kafka is away")] * 2
    load = run.recovered.load

    async def flaky(appended_ms: int) -> Any:
        if failures:
            raise failures.pop()
        return await load(appended_ms)

    monkeypatch.setattr(run.recovered, "load", flaky)
    monkeypatch.setattr("factstream.agents.window.backoff_delay", lambda *a, **k: 0.01)
    await run.feed(list(values))
    assert [o for _, o in run.outcomes] == [Outcome.APPLIED] * 3
    assert failures == [] and run.reads == [0]


async def test_documents_are_embedded_ahead_once_each() -> None:
    values, decisions = conflicting(12)
    run = Run(decisions, 1)
    await run.feed(list(values))
    assert [o for _, o in run.outcomes] == [Outcome.APPLIED] * 12
    texts = run.embedder.texts
    documents = [Document.from_bytes(v).text for v in values]
    assert all(texts.count(text) == 1 for text in documents)  # not again at its turn
    # Read ahead of the one in flight: every document was embedded before the first
    # document's facts were (by the materializer, at its commit).
    first_fact = min(i for i, text in enumerate(texts) if text not in documents)
    assert max(texts.index(text) for text in documents) < first_fact


async def test_the_window_makes_false_only_facts_a_document_names() -> None:
    # The LM finds Emmert's fact outdated in every document after the first; only the one
    # that names him may close it. In the window the Creighton article is decided before
    # the fact exists and again once the seed's commit adds it (its candidates changed).
    emmert = "Emmert is the president of the NCAA."
    decisions = Decisions(extract={"[seed]": [emmert]}, outdated={"president of the NCAA": None})
    values = [
        document(0, "[seed] Mark Emmert leads the NCAA."),
        document(1, "Creighton Bluejays guard Alex O'Connell drives against Butler."),
        document(2, "Butler Bulldogs guard Jair Bolden scores 20 against Creighton."),
        document(3, "Mark Emmert steps down after 12 years."),
    ]
    serial, windowed = Run(decisions, 1), Run(decisions, 4)
    await serial.feed(list(values))
    await windowed.feed(list(values))
    assert windowed.publisher.comparable() == serial.publisher.comparable()
    ops = [[(e.op.value, e.document_id) for e in batch] for batch in windowed.publisher.batches]
    assert ops == [[("add", "d0")], [("close", "d3")]]
    for run in (serial, windowed):
        refused = {"task": "classify_facts", "model": run.lm.model, "reason": "not_about"}
        assert run.sample("factstream_lm_refused_total", **refused) == 2
    assert (
        windowed.sample("factstream_redecisions_total", reason="added", at="early")
        + (windowed.sample("factstream_redecisions_total", reason="added", at="commit"))
        > 0
    )


class ExpectingStore(InMemoryFactStore):
    """The in-memory store, recording the namespaces the editor announces."""

    def __init__(self) -> None:
        super().__init__()
        self.expected: list[str] = []

    def expect(self, namespace: str) -> None:
        self.expected.append(namespace)


async def test_documents_read_ahead_announce_their_namespace_to_the_store() -> None:
    values, decisions = conflicting(6)
    store = ExpectingStore()
    run = Run(decisions, 4, store=store)
    await run.feed(values)
    assert run.outcomes == [(i, Outcome.APPLIED) for i in range(6)]
    assert store.expected == [NS] * 6  # each document's, as it was read (new tenants batched)


class OverlapStore(InMemoryFactStore):
    """Counts a commit's searches (its check of the candidates) made while the same
    commit's read of the facts its batch touches is under way (each read takes a moment)."""

    def __init__(self) -> None:
        super().__init__()
        self.reading = self.overlapped = self.checks = 0

    async def search(self, *args: Any, **kwargs: Any) -> Any:
        if current() is not None:  # a commit's (factstream/tally.py), not a decision's
            self.checks += 1
            self.overlapped += self.reading > 0
        return await super().search(*args, **kwargs)

    async def get_stored(self, namespace: str, fact_ids: Sequence[str]) -> Any:
        inside = current() is not None
        self.reading += inside
        try:
            await asyncio.sleep(0.01)
            return await super().get_stored(namespace, fact_ids)
        finally:
            self.reading -= inside


async def test_a_commit_reads_the_facts_it_touches_beside_its_check() -> None:
    # d1 is decided after d0 commits, then an empty document commits before d1: d1's
    # commit checks its candidates (a commit came since its decision), finds them
    # unchanged, and reads the facts its batch touches at once with that check (one round
    # trip, not two after each other). The result is one at a time's.
    extract: dict[str, list[Any]] = {"[d0]": ["The mayor is person 0."], "[e]": []}
    extract["[d1]"] = ["Line 1 is open."]
    decisions = Decisions(extract=extract)
    values = [document(0), document(5, text="[e] Nothing to say.", doc_id="e"), document(1)]
    serial, early = Run(decisions, 1), Run(decisions, 1, store=OverlapStore())
    await serial.feed(values)
    early.values = values
    first, empty, last = (early.record(offset) for offset in range(3))
    assert await early.editor.handle(first, early.recovered) is Outcome.APPLIED
    decided = await early.editor.decide(last, early.recovered)
    assert await early.editor.handle(empty, early.recovered) is Outcome.EMPTY
    assert await early.editor.handle(last, early.recovered, _ready(decided)) is Outcome.APPLIED
    assert "recheck" in early.editor.steps and "redecide" not in early.editor.steps
    assert isinstance(early.store, OverlapStore)
    assert early.store.checks > 0 and early.store.overlapped > 0
    assert early.publisher.comparable() == serial.publisher.comparable()
    assert await early.store.list_facts(NS, include_false=True, limit=1000) == (
        await serial.store.list_facts(NS, include_false=True, limit=1000)
    )


def _ready(value: Any) -> asyncio.Future[Any]:
    done = asyncio.get_running_loop().create_future()
    done.set_result(value)
    return done


class WriteOrder(InMemoryFactStore):
    """The store double, noting for each batch recorded whether the editor counted its
    commit (``Editor.commits``) between the facts' write and the record."""

    def __init__(self) -> None:
        super().__init__()
        self.editor: Editor | None = None
        self.at_write = 0
        self.counted_early: list[bool] = []

    async def upsert(self, namespace: str, facts: Sequence[Any]) -> None:
        await super().upsert(namespace, facts)
        assert self.editor is not None
        self.at_write = self.editor.commits(namespace)

    async def record_batch(self, namespace: str, batch: Any) -> None:
        assert self.editor is not None
        if batch.size:
            self.counted_early.append(self.editor.commits(namespace) != self.at_write)
        await super().record_batch(namespace, batch)


async def test_with_predict_a_commit_counts_itself_once_its_facts_are_written() -> None:
    # With ``predict`` a commit counts itself and pokes the later documents once its facts
    # are written, so their checks run beside its applied record (and a check made then
    # stands at their commit), while the result stays the serial one.
    values, decisions = conflicting(16)
    serial = Run(decisions, 1)
    await serial.feed(list(values))
    for policy, early in (("predict", True), ("speculate", False)):
        store = WriteOrder()
        run = Run(decisions, 8, dependencies=policy, store=store)  # type: ignore[arg-type]
        store.editor = run.editor
        await run.feed(list(values))
        assert run.outcomes == serial.outcomes
        assert run.publisher.comparable() == serial.publisher.comparable()
        assert await store.list_facts(NS, include_false=True, limit=1000) == (
            await serial.store.list_facts(NS, include_false=True, limit=1000)
        )
        assert store.counted_early == [early] * 16, policy
