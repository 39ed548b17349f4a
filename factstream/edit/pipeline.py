"""ERASE for one document (docs/design.md section 4): retrieve, classify, rewrite, extract, bound.

Plain async code over Protocols (fact store, embedder, task runner): it knows nothing of
Kafka. It decides the document's edit batch; publishing and applying it is the caller's.

Valid time (docs/design.md section 3): retrieval sees the facts true at the document's event time
that still hold then or later (a fact whose valid interval ended before it is history, not
edited). A fact labelled ``outdated`` (the world changed) is rewritten as an ``update``,
which closes the old fact's interval where the new one starts, or closed at the event time
when no rewrite is possible; it stays true of its interval. One labelled ``wrong`` (never
true) is rewritten or invalidated as a ``correction``; ``make_false`` (prompts that do not
tell the two apart) as before valid time. Added and rewritten facts carry the interval the
extraction or rewrite resolved.

Grounded output (step 5, :mod:`factstream.edit.grounding`): every added or rewritten
fact is checked against the document (and, for a rewrite, the fact it replaces and the facts
still true, which its prompt showed); a fact with no word in it (a rewrite to ",") is
refused whatever the grounding setting. A refused add is dropped; a refused rewrite becomes
what a fact without a possible rewrite gets (closed or invalidated), since the document
still made the old fact false. Each refusal is logged with the document id and counted
(``factstream_lm_refused`` by task and reason); the document's other edits go through.

A document changes only what it is about (:mod:`factstream.edit.about`): a fact the
classification made false is invalidated, closed or rewritten only if the document names
one of its entities (subject or object, in a form the entity index knows). A refused
decision leaves the fact true (shown to the rewrites among the facts still true), is
logged with the document and fact ids and counted (``factstream_lm_refused``, not_about;
``factstream_lm_subject_checked``); the blast radius counts the classification's labels
before the check, so a document the LM finds to make too many facts false still goes to
review. ``bound_problem`` checks the finished plan again, whatever built it.

Conversation chunks (documents with turns, docs/design.md section 2): extraction uses the
conversation prompt, which resolves first and second person to the speakers; a fact still
in the first or second person is refused (``unresolved_person``, whatever the grounding
setting), and every added or rewritten fact records the turns it was said in (``turn_ids``,
found from its words without the LM: ``persons.cite_turns``) and the speaker who said it
(``said_by``).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

from factstream.config import EditorSettings
from factstream.edit.about import NotAbout, check_about, fact_names
from factstream.edit.ahead import DocumentVectors
from factstream.edit.grounding import Refusal, check_grounded, no_words
from factstream.edit.passages import passages
from factstream.edit.persons import cite_turns, unresolved_person
from factstream.edit.retrieval import (
    Overlay,
    Retrieval,
    Where,
    editor_candidates,
    query_vectors,
)
from factstream.embed.base import Embedder, Vector
from factstream.lm.base import Usage
from factstream.lm.tasks.editing import (
    classify_facts_batched,
    classify_facts_per_fact,
    extract_new_facts,
    rewrite_false_fact,
)
from factstream.lm.tasks.facts import FactStructure, NewFact
from factstream.lm.tasks.runner import TaskResult, TaskRunner
from factstream.metrics import timed
from factstream.prompts.classify_facts import FALSE_LABELS, Label
from factstream.prompts.models import DocumentView
from factstream.prompts.rewrite_fact import Change
from factstream.resilience import gather_or_cancel
from factstream.store.base import FactStore, SearchHit
from factstream.temporal import ValidInterval
from factstream.text.names import document_title
from factstream.topics.records import (
    BatchRef,
    ChangeKind,
    DecidedBy,
    Document,
    EditOp,
    FactEdit,
    InputRef,
    edit_id_for,
    fact_id_for,
)

__all__ = [
    "DecisionGate",
    "EditContext",
    "RAG_DECIDED",
    "EditPlan",
    "Extraction",
    "PlannedEdit",
    "batch_id_for",
    "bound_problem",
    "draft_adds",
    "edit_document",
    "retrieve",
    "normalise",
    "shown_order",
    "timed",
    "to_records",
]

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class EditContext:
    """What editing needs, injected: the store, the embedder, the LM tasks and the settings."""

    store: FactStore
    embedder: Embedder
    runner: TaskRunner
    settings: EditorSettings
    ahead: DocumentVectors | None = None  # document vectors computed ahead (the worker's)


@dataclass(frozen=True)
class PlannedEdit:
    """One decision before it becomes a record.

    Attributes:
        op: What the edit does.
        text: The fact's text (a rewrite's new text).
        decided_by: Model and prompt version.
        fact_id: The existing fact (reinforce, invalidate, close, rewrite's old one).
        previous_text: The existing fact's text.
        valid_from: Add, rewrite: when the new fact starts to hold (None: open).
        valid_to: Add, rewrite: when it stops holding (None: open); close: when the
            existing fact stopped holding.
        change: Invalidate, rewrite, close: an update (the world changed) or a correction
            (never true); None: not told (make_false).
        structure: Add, rewrite: the new fact's triple, where the LM could tell.
        said_by: Add, rewrite from a conversation: the speaker who said it.
        turn_ids: Add, rewrite from a conversation: the turns it was said in (None: none
            found).
    """

    op: EditOp
    text: str
    decided_by: DecidedBy
    fact_id: str | None = None
    previous_text: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    change: ChangeKind | None = None
    structure: FactStructure | None = None
    said_by: str | None = None
    turn_ids: tuple[str, ...] | None = None

    @classmethod
    def adding(
        cls,
        fact: NewFact,
        decided_by: DecidedBy,
        *,
        replaces: SearchHit | None = None,
        change: ChangeKind | None = None,
    ) -> PlannedEdit:
        """An add of ``fact``, or a rewrite of ``replaces`` into it."""
        old = replaces.fact if replaces is not None else None
        return cls(
            EditOp.ADD if old is None else EditOp.REWRITE,
            fact.text,
            decided_by,
            fact_id=None if old is None else old.fact_id,
            previous_text=None if old is None else old.text,
            valid_from=fact.interval.start,
            valid_to=fact.interval.end,
            change=change,
            structure=fact.structure,
        )


class DecisionGate(Protocol):
    """Hooks into a document's decision (agents/dependencies.py: it may wait for earlier
    documents of its window before its judgement)."""

    def extracted(self, plan: EditPlan) -> None:
        """``plan.extraction`` is known now."""

    async def judge_on(self, plan: EditPlan) -> list[SearchHit]:
        """The candidates to classify (``plan.retrieved`` or newer ones), when it may."""


@dataclass(frozen=True)
class Extraction:
    """A document's new facts as extraction answered them (grounded ones only).

    They depend on the document alone, never on the knowledge base, so a document decided
    again (its candidates changed) keeps them.
    """

    facts: list[NewFact]
    decided_by: DecidedBy


@dataclass
class EditPlan:
    """A document's decisions, its edit batch, and what the LM spent on it.

    ``vector`` (the document's embedding), ``queries`` (its retrieval queries' vectors,
    ``retrieval.query_vectors``: ``vector`` first) and ``extraction`` are what a new
    decision on other candidates may reuse; ``usage`` counts only the LM calls this plan
    made.
    """

    document: Document
    retrieved: list[SearchHit]
    labels: list[Label]
    planned: list[PlannedEdit]
    over_limit: bool
    usage: dict[str, Usage] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage
    vector: Vector | None = None
    queries: list[Vector] = field(default_factory=list)
    extraction: Extraction | None = None
    # Facts the classification made false that the subject check refused (they keep their
    # truth): fact id -> why.
    not_about: dict[str, NotAbout] = field(default_factory=dict)
    # The LM's answers of this document's judgements, by what their prompt showed: a new
    # decision on other candidates (``reuse``) takes the answer of a prompt it would send
    # again, as the LM would give it, and asks only the prompts that differ.
    answers: dict[tuple[object, ...], TaskResult[Any]] = field(default_factory=dict)

    def spend(self, task: str, usage: Usage) -> None:
        """Add ``usage`` to what ``task`` cost this document."""
        self.usage[task] = self.usage.get(task, Usage()) + usage


def normalise(text: str) -> str:
    """The form in which two fact texts count as duplicates."""
    return " ".join(text.casefold().replace(".", " ").split())


def _view(doc: Document) -> DocumentView:
    return DocumentView(
        text=doc.text, timestamp=doc.timestamp, title=doc.title, speakers=tuple(doc.speakers)
    )


def _decided(result: TaskResult[Any]) -> DecidedBy:
    return DecidedBy(model=result.model, prompt_version=result.prompt)


async def document_queries(doc: Document, ctx: EditContext, vector: Vector) -> list[Vector]:
    """The vectors of ``doc``'s retrieval queries, its text's (``vector``) first."""
    how = Retrieval.from_settings(ctx.settings)
    title = document_title(doc.title, doc.source)
    return await query_vectors(ctx.embedder, doc.text, how, known=[vector], title=title)


async def retrieve(
    doc: Document,
    ctx: EditContext,
    timings: dict[str, float],
    vectors: Sequence[Vector],
    overlay: Overlay | None = None,
) -> list[SearchHit]:
    """The facts ``doc`` may edit: its candidates in the knowledge base as it stands now
    (with ``overlay``: as predicted, ``retrieval.Overlay``).

    ``vectors``: its queries' (``document_queries``), or the first of them; the rest are
    embedded here."""
    # Facts that still hold at the event time or later; ended ones are history.
    where = Where(doc.namespace, doc.timestamp, ValidInterval(doc.timestamp, None))
    how = Retrieval.from_settings(ctx.settings)
    title = document_title(doc.title, doc.source)
    found = await editor_candidates(
        ctx.store,
        ctx.embedder,
        where,
        doc.text,
        how,
        timings,
        vectors=vectors,
        title=title,
        overlay=overlay,
    )
    return shown_order(found)


def shown_order(hits: Sequence[SearchHit]) -> list[SearchHit]:
    """The candidates in the order the LM is shown them: oldest first, then by text (then
    fact id).

    A fixed order, not the ranking's: which facts are candidates is the ranking's choice,
    but the prompt does not depend on how they ranked, so the same candidates always make
    the same prompt (a document decided early stands when only their scores moved).
    """
    return sorted(hits, key=lambda hit: (hit.fact.first_seen, hit.fact.text, hit.fact.fact_id))


def _again(result: TaskResult[T]) -> TaskResult[T]:
    """An answer taken again for the same prompt: it costs no call now."""
    return TaskResult(result.value, result.prompt, result.model, Usage(), calls=0, attempts=0)


async def _classify(
    view: DocumentView, hits: Sequence[SearchHit], ctx: EditContext, plan: EditPlan
) -> TaskResult[list[Label]]:
    """The candidates' labels; a prompt this document sent before is not sent again
    (``plan.answers``): per fact, only the facts not asked about before are."""
    texts, cfg, answers = [hit.fact.text for hit in hits], ctx.settings, plan.answers
    if cfg.classify_mode == "per_fact":
        prompt = cfg.classify_fact_prompt
        missing = [t for t in dict.fromkeys(texts) if ("classify_fact", prompt, t) not in answers]
        if missing:
            asked = await classify_facts_per_fact(ctx.runner, view, missing, prompt=prompt)
            for text, label in zip(missing, asked.value, strict=True):
                answers["classify_fact", prompt, text] = asked.with_value(label)
        labels = [answers["classify_fact", prompt, t].value for t in texts]
        first = answers["classify_fact", prompt, texts[0]]
        if not missing:
            return _again(first.with_value(labels))
        return asked.with_value(labels)
    key = ("classify_facts", cfg.classify_prompt, tuple(texts))
    if key in answers:
        return _again(answers[key])
    result = await classify_facts_batched(ctx.runner, view, texts, prompt=cfg.classify_prompt)
    answers[key] = result
    return result


# What a false label says of the fact: outdated, the world changed (an update: closed);
# wrong, it was never true (a correction: invalidated); make_false, not told.
_CHANGES: dict[Label, ChangeKind | None] = {
    "make_false": None,
    "outdated": ChangeKind.UPDATE,
    "wrong": ChangeKind.CORRECTION,
}
_TOLD: dict[ChangeKind, Change] = {ChangeKind.UPDATE: "update", ChangeKind.CORRECTION: "correction"}


async def _rewrites(
    plan: EditPlan,
    view: DocumentView,
    false: Sequence[tuple[SearchHit, Label]],
    still_true: Sequence[str],
    ctx: EditContext,
) -> list[PlannedEdit]:
    async def one(hit: SearchHit, label: Label) -> PlannedEdit:
        change = _CHANGES[label]
        told = None if change is None else _TOLD[change]
        prompt = ctx.settings.rewrite_prompt
        key = ("rewrite_fact", prompt, hit.fact.text, tuple(still_true), told)
        if key in plan.answers:  # the same prompt as an earlier decision's: its answer
            result = _again(plan.answers[key])
        else:
            result = await rewrite_false_fact(
                ctx.runner, view, hit.fact.text, still_true, change=told, prompt=prompt
            )
            plan.answers[key] = result
        plan.spend("rewrite", result.usage)
        rewrite = result.value
        if rewrite is not None and _refusal(
            ctx, plan.document, view, result, rewrite.text, replaces=hit.fact.text, also=still_true
        ):
            rewrite = None
        return _false_edit(hit, rewrite, change, _decided(result), view.timestamp)

    # The rewrites do not depend on each other: all at once, kept in the classified order.
    return await gather_or_cancel(*(one(hit, label) for hit, label in false))


def _refusal(
    ctx: EditContext,
    doc: Document,
    view: DocumentView,
    result: TaskResult[Any],
    text: str,
    *,
    replaces: str | None = None,
    also: Sequence[str] = (),
) -> Refusal | None:
    """Why the LM's fact ``text`` (an add, or a rewrite of ``replaces``) is refused; None: kept.

    One rule for every fact the LM writes: a fact with no word in it (a rewrite to ",")
    and a conversation's fact still in the first or second person are refused, whatever
    the settings; otherwise, with grounding on, the fact
    is checked against what its prompt showed (``view``, ``replaces``, ``also``), and
    ``factstream_lm_grounded`` counts it kept or refused. That metric counts the facts the
    grounding check ran on, nothing else. A refusal is logged and counted
    (``factstream_lm_refused``).
    """
    refusal = no_words(text) or (unresolved_person(text) if doc.turns else None)
    if refusal is None and ctx.settings.grounding:
        refusal = check_grounded(text, view.body, replaces, also=also, date=view.timestamp)
        if ctx.runner.metrics is not None:
            outcome = "kept" if refusal is None else "refused"
            task = result.prompt.split(".")[0]
            ctx.runner.metrics.grounded.labels(task, result.model, outcome).inc()
    if refusal is not None:
        _refused(ctx, doc, result, text, refusal)
    return refusal


def _about(ctx: EditContext, plan: EditPlan, result: TaskResult[Any], hit: SearchHit) -> bool:
    """Whether ``plan``'s document may make ``hit``'s fact false, as ``result`` (the
    classification) decided: with the subject check on, only if it names one of the fact's
    entities (``edit.about``). A refusal is logged, counted (``factstream_lm_refused``,
    not_about) and kept in ``plan.not_about``; ``factstream_lm_subject_checked`` counts
    every fact the check saw, by outcome.
    """
    if not ctx.settings.subject_check:
        return True
    doc, fact = plan.document, hit.fact
    refusal = check_about(fact, doc.text, title=doc.title, source=doc.source)
    task = result.prompt.split(".")[0]
    metrics = ctx.runner.metrics
    if refusal is None:
        if metrics is not None:
            outcome = "kept" if fact_names(fact) else "unchecked"
            metrics.subject_checked.labels(task, result.model, outcome).inc()
        return True
    plan.not_about[fact.fact_id] = refusal
    log.info(
        "%s: refused to make fact %s false for document %r (%s: %s): %r",
        result.prompt,
        fact.fact_id,
        doc.id,
        refusal.reason,
        refusal.detail,
        fact.text,
    )
    if metrics is not None:
        metrics.subject_checked.labels(task, result.model, "refused").inc()
        metrics.refused.labels(task, result.model, refusal.reason).inc()
    return False


def _cited(doc: Document, planned: list[PlannedEdit]) -> list[PlannedEdit]:
    """Adds and rewrites from a conversation, with the turns each was said in and who said
    it (``persons.cite_turns``)."""
    if not doc.turns:
        return planned
    ids, cited = doc.turn_ids, []
    for p in planned:
        if p.op in (EditOp.ADD, EditOp.REWRITE):
            citation = cite_turns(p.text, doc.turns)
            turn_ids = tuple(ids[i] for i in citation.positions) or None
            p = replace(p, said_by=citation.speaker, turn_ids=turn_ids)
        cited.append(p)
    return cited


def _refused(
    ctx: EditContext, doc: Document, result: TaskResult[Any], text: str, refusal: Refusal
) -> None:
    """Log and count a fact refused as ungrounded (the task is the prompt's name)."""
    task = result.prompt.split(".")[0]
    log.info(
        "%s: refused %s fact of document %r (%s: %r): %r",
        result.prompt,
        "a rewritten" if task == "rewrite_fact" else "an added",
        doc.id,
        refusal.reason,
        refusal.detail,
        text,
    )
    if ctx.runner.metrics is not None:
        ctx.runner.metrics.refused.labels(task, result.model, refusal.reason).inc()


def _false_edit(
    hit: SearchHit,
    rewrite: NewFact | None,
    change: ChangeKind | None,
    decided: DecidedBy,
    event_time: datetime,
) -> PlannedEdit:
    """The edit of a fact the document made false: a rewrite, else a close or invalidate."""
    old = hit.fact
    if rewrite is not None and normalise(rewrite.text) != normalise(old.text):
        return PlannedEdit.adding(rewrite, decided, replaces=hit, change=change)
    op = EditOp.CLOSE if change is ChangeKind.UPDATE else EditOp.INVALIDATE
    valid_to = event_time if op is EditOp.CLOSE else None
    return PlannedEdit(
        op, old.text, decided, old.fact_id, old.text, valid_to=valid_to, change=change
    )


def _new_facts(
    extracted: Sequence[NewFact], known: set[str], decided: DecidedBy
) -> list[PlannedEdit]:
    planned = []
    for fact in extracted:
        key = normalise(fact.text)
        if key and key not in known:
            known.add(key)
            planned.append(PlannedEdit.adding(fact, decided))
    return planned


def draft_adds(extraction: Extraction) -> list[PlannedEdit]:
    """The adds a plan would make of ``extraction`` were its judgement to edit nothing (the
    knowledge base a later document is judged on while it is undecided: agents/dependencies.py).
    """
    return _new_facts(extraction.facts, set(), extraction.decided_by)


# What decided a rag passage: no model, only the splitting rule.
RAG_DECIDED = DecidedBy(model="none", prompt_version="rag_passages.v1")


async def edit_document(
    doc: Document,
    ctx: EditContext,
    *,
    retrieved: list[SearchHit] | None = None,
    reuse: EditPlan | None = None,
    gate: DecisionGate | None = None,
) -> EditPlan:
    """Decide the edits ``doc`` makes to its namespace's knowledge base.

    Over the blast radius (more invalidations and rewrites than ``max_edits``), the plan
    stops after classification, is marked ``over_limit`` and carries no edits.

    The LM calls that do not depend on each other run at once: extraction (which needs the
    document alone) beside retrieval, classification and the rewrites, and the rewrites of
    the facts found false beside each other. The plan is the one made one call at a time.

    The paper's baselines (``settings.method``) decide adds only: ``rag`` the document's
    passages without the LM, ``fact-rag`` the extracted facts without retrieval or editing.

    Args:
        doc: The document.
        ctx: The store, embedder, LM tasks and settings.
        retrieved: The candidates, when the caller has just retrieved them (a document
            decided again on the knowledge base as it now stands); else retrieved here.
        reuse: An earlier plan for ``doc``: its embedding and extraction are kept.
        gate: Told when the extraction is known; says when, and on which candidates, the
            judgement (classification, rewrites) may begin.
    """
    view = _view(doc)
    timings: dict[str, float] = {}
    if ctx.settings.method == "rag":
        texts = passages(doc.text, ctx.settings.passage_chars)
        planned = [PlannedEdit(EditOp.ADD, text, RAG_DECIDED) for text in texts]
        return EditPlan(doc, [], [], planned, over_limit=False, timings=timings)
    plan = EditPlan(doc, [], [], [], over_limit=False, timings=timings)
    if reuse is not None:
        plan.vector, plan.queries = reuse.vector, reuse.queries
        plan.extraction = reuse.extraction
        plan.answers = reuse.answers
    await gather_or_cancel(
        _judge(plan, ctx, view, retrieved, gate), _extract(plan, ctx, view, gate)
    )
    if plan.over_limit:
        return plan
    # Skip new facts that only restate a fact just reinforced or rewritten (ERASE A.2).
    known = {normalise(p.text) for p in plan.planned if p.op in (EditOp.REINFORCE, EditOp.REWRITE)}
    assert plan.extraction is not None  # noqa: S101 - _extract set it
    new = _new_facts(plan.extraction.facts, known, plan.extraction.decided_by)
    plan.planned = _cited(doc, plan.planned + new)
    return plan


async def _judge(
    plan: EditPlan,
    ctx: EditContext,
    view: DocumentView,
    retrieved: list[SearchHit] | None,
    gate: DecisionGate | None = None,
) -> None:
    """Retrieve, classify and rewrite into ``plan`` (or mark it over the blast radius)."""
    doc = plan.document
    if ctx.settings.method == "fact-rag":
        return
    if retrieved is None:
        if plan.vector is None:
            with timed(plan.timings, "embed"):
                early = await ctx.ahead.take(doc) if ctx.ahead is not None else None
                if early is None:  # a batch call (embed() is the ask path's, for questions)
                    early = (await ctx.embedder.embed_batch([doc.text]))[0]
                plan.vector = early
        if not plan.queries:
            with timed(plan.timings, "embed"):  # the title's, the sentences' (if any)
                plan.queries = await document_queries(doc, ctx, plan.vector)
        retrieved = await retrieve(doc, ctx, plan.timings, plan.queries)
    plan.retrieved = shown_order(retrieved)
    if gate is not None:
        plan.retrieved = shown_order(await gate.judge_on(plan))
    hits = plan.retrieved
    # The audit trail of the blast radius: the only facts this document may edit.
    ids = " ".join(hit.fact.fact_id for hit in hits) or "-"
    log.info("candidates for %r in %s: %s", doc.id, doc.namespace, ids)
    if not hits:
        return
    with timed(plan.timings, "classify"):
        classified = await _classify(view, hits, ctx, plan)
    plan.labels = classified.value
    plan.spend("classify", classified.usage)
    decided = _decided(classified)
    labelled = list(zip(hits, plan.labels, strict=True))
    false = [(hit, label) for hit, label in labelled if label in FALSE_LABELS]
    if len(false) > ctx.settings.max_edits:
        plan.over_limit = True
        return
    plan.planned += [
        PlannedEdit(EditOp.REINFORCE, hit.fact.text, decided, hit.fact.fact_id)
        for hit, label in labelled
        if label == "reinforce"
    ]
    false = [(hit, label) for hit, label in false if _about(ctx, plan, classified, hit)]
    kept = {hit.fact.fact_id for hit, _ in false}
    still_true = [hit.fact.text for hit in hits if hit.fact.fact_id not in kept]
    with timed(plan.timings, "rewrite"):
        plan.planned += await _rewrites(plan, view, false, still_true, ctx)


async def _extract(
    plan: EditPlan, ctx: EditContext, view: DocumentView, gate: DecisionGate | None = None
) -> None:
    """The document's new facts, grounded, into ``plan.extraction`` (unless it has them)."""
    if plan.extraction is not None:
        if gate is not None:
            gate.extracted(plan)
        return
    doc = plan.document
    cfg = ctx.settings
    prompt = cfg.extract_conversation_prompt if doc.turns else cfg.extract_prompt
    with timed(plan.timings, "extract"):
        extracted = await extract_new_facts(ctx.runner, view, prompt=prompt)
    plan.spend("extract", extracted.usage)
    grounded = [f for f in extracted.value if _refusal(ctx, doc, view, extracted, f.text) is None]
    plan.extraction = Extraction(grounded, _decided(extracted))
    if gate is not None:
        gate.extracted(plan)


_DESTRUCTIVE = (EditOp.INVALIDATE, EditOp.CLOSE, EditOp.REWRITE)


def bound_problem(plan: EditPlan, max_edits: int, *, subject_check: bool = True) -> str | None:
    """Why ``plan`` breaks the blast radius (docs/design.md section 3), or None if it keeps it.

    Checked on the finished plan, whatever built it: an edit of an existing fact must name
    a fact retrieval returned for this document, at most ``max_edits`` edits may make a
    fact false or end it (invalidate, close or rewrite), and, with ``subject_check``, the
    document must name every fact it makes false (``edit.about``; the decision's own check
    refused the others, so a plan breaks this only if something else built it).
    """
    false = sum(label in FALSE_LABELS for label in plan.labels)
    if plan.over_limit:
        return f"makes {false} facts false (limit {max_edits})"
    retrieved = {hit.fact.fact_id: hit.fact for hit in plan.retrieved}
    outside = sorted({p.fact_id for p in plan.planned if p.fact_id and p.fact_id not in retrieved})
    if outside:
        return f"edits {len(outside)} facts retrieval did not return: {' '.join(outside[:5])}"
    destructive = [p for p in plan.planned if p.op in _DESTRUCTIVE]
    if len(destructive) > max_edits:
        return f"makes {len(destructive)} facts false (limit {max_edits})"
    doc = plan.document
    unnamed = [
        p.fact_id
        for p in destructive
        if subject_check
        and p.fact_id
        and check_about(retrieved[p.fact_id], doc.text, title=doc.title, source=doc.source)
    ]
    if unnamed:
        return f"makes {len(unnamed)} facts false that it does not name: {' '.join(unnamed[:5])}"
    return None


def batch_id_for(doc: Document, planned: Sequence[PlannedEdit]) -> str:
    """Identifies one decided batch: two different batches for one document differ here."""
    digest = hashlib.sha256(doc.id.encode())
    for p in planned:
        digest.update(f"\x1e{p.op.value}\x1f{p.fact_id}\x1f{p.text}".encode())
        if p.valid_from or p.valid_to or p.change:  # valid time, where the batch has it
            digest.update(f"\x1f{p.valid_from}\x1f{p.valid_to}\x1f{p.change}".encode())
    return f"{doc.id}@{digest.hexdigest()[:16]}"


def to_records(plan: EditPlan, source: InputRef, now: datetime | None = None) -> list[FactEdit]:
    """The plan's batch as changelog records, with deterministic ids."""
    doc, created = plan.document, now or datetime.now(UTC)
    batch_id, size = batch_id_for(doc, plan.planned), len(plan.planned)
    records = []
    for pos, p in enumerate(plan.planned):
        # Reinforce, invalidate and close edit the existing fact; add and rewrite make a new one.
        edits_existing = p.op in (EditOp.REINFORCE, EditOp.INVALIDATE, EditOp.CLOSE)
        fact_id = (
            p.fact_id if edits_existing and p.fact_id else fact_id_for(doc.namespace, doc.id, pos)
        )
        records.append(
            FactEdit(
                edit_id=edit_id_for(doc.namespace, doc.id, pos),
                namespace=doc.namespace,
                fact_id=fact_id,
                op=p.op,
                text=p.text,
                previous_text=p.previous_text if p.op is EditOp.REWRITE else None,
                replaces=p.fact_id if p.op is EditOp.REWRITE else None,
                truth=p.op is not EditOp.INVALIDATE,
                event_time=doc.timestamp,
                document_id=doc.id,
                batch=BatchRef(id=batch_id, size=size, position=pos),
                input=source,
                decided_by=p.decided_by,
                created_at=created,
                valid_from=p.valid_from,
                valid_to=p.valid_to,
                change=p.change,
                said_by=p.said_by,
                turn_ids=None if p.turn_ids is None else list(p.turn_ids),
                **_structure_fields(p.structure),
            )
        )
    return records


def _structure_fields(structure: FactStructure | None) -> dict[str, str]:
    """The edit's structured fields: all four where extraction could tell, else none."""
    if structure is None:
        return {}
    return {
        "subject": structure.subject,
        "relation": structure.relation,
        "object": structure.object,
        "object_type": structure.object_type,
    }
