"""ERASE for one document (docs/design.md section 4): retrieve, classify, rewrite, extract, bound.

Plain async code over Protocols (fact store, embedder, task runner): it knows nothing of
Kafka. It decides the document's edit batch; publishing and applying it is the caller's.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from factstream.config import EditorSettings
from factstream.embed.base import Embedder
from factstream.knowledge.passages import passages
from factstream.lm.base import Usage
from factstream.prompts.classify_facts import Label
from factstream.prompts.models import DocumentView
from factstream.store.base import FactStore, SearchHit
from factstream.tasks.editing import (
    classify_facts_batched,
    classify_facts_per_fact,
    extract_new_facts,
    rewrite_false_fact,
)
from factstream.tasks.runner import TaskResult, TaskRunner
from factstream.topics.records import (
    BatchRef,
    DecidedBy,
    Document,
    EditOp,
    FactEdit,
    InputRef,
    edit_id_for,
    fact_id_for,
)

__all__ = [
    "EditContext",
    "RAG_DECIDED",
    "EditPlan",
    "PlannedEdit",
    "batch_id_for",
    "bound_problem",
    "edit_document",
    "normalise",
    "timed",
    "to_records",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EditContext:
    """What editing needs, injected: the store, the embedder, the LM tasks and the settings."""

    store: FactStore
    embedder: Embedder
    runner: TaskRunner
    settings: EditorSettings


@dataclass(frozen=True)
class PlannedEdit:
    """One decision before it becomes a record."""

    op: EditOp
    text: str
    decided_by: DecidedBy
    fact_id: str | None = None  # the existing fact (reinforce, invalidate, rewrite's old one)
    previous_text: str | None = None


@dataclass
class EditPlan:
    """A document's decisions, its edit batch, and what the LM spent on it."""

    document: Document
    retrieved: list[SearchHit]
    labels: list[Label]
    planned: list[PlannedEdit]
    over_limit: bool
    usage: dict[str, Usage] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage

    def spend(self, task: str, usage: Usage) -> None:
        """Add ``usage`` to what ``task`` cost this document."""
        self.usage[task] = self.usage.get(task, Usage()) + usage


def normalise(text: str) -> str:
    """The form in which two fact texts count as duplicates."""
    return " ".join(text.casefold().replace(".", " ").split())


def _view(doc: Document) -> DocumentView:
    return DocumentView(text=doc.text, timestamp=doc.timestamp, title=doc.title)


def _decided(result: TaskResult[Any]) -> DecidedBy:
    return DecidedBy(model=result.model, prompt_version=result.prompt)


@contextmanager
def timed(timings: dict[str, float], stage: str) -> Iterator[None]:
    """Add the seconds the block takes to ``timings[stage]``."""
    started = time.perf_counter()
    try:
        yield
    finally:
        timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - started


async def _retrieve(doc: Document, ctx: EditContext, timings: dict[str, float]) -> list[SearchHit]:
    cfg = ctx.settings
    with timed(timings, "embed"):
        vector = await ctx.embedder.embed(doc.text)
    with timed(timings, "retrieve"):
        return await ctx.store.search(
            doc.namespace,
            doc.text,
            vector,
            as_of=doc.timestamp,
            top_k=cfg.top_k,
            min_similarity=cfg.min_similarity,
            alpha=cfg.alpha,
        )


async def _classify(
    view: DocumentView, hits: Sequence[SearchHit], ctx: EditContext
) -> TaskResult[list[Label]]:
    texts = [hit.fact.text for hit in hits]
    if ctx.settings.classify_mode == "per_fact":
        return await classify_facts_per_fact(ctx.runner, view, texts)
    return await classify_facts_batched(ctx.runner, view, texts)


async def _rewrites(
    plan: EditPlan, false: Sequence[SearchHit], still_true: Sequence[str], ctx: EditContext
) -> list[PlannedEdit]:
    planned, view = [], _view(plan.document)
    for hit in false:
        result = await rewrite_false_fact(ctx.runner, view, hit.fact.text, still_true)
        plan.spend("rewrite", result.usage)
        if result.value and normalise(result.value) != normalise(hit.fact.text):
            op, text = EditOp.REWRITE, result.value
        else:
            op, text = EditOp.INVALIDATE, hit.fact.text
        planned.append(
            PlannedEdit(op, text, _decided(result), hit.fact.fact_id, previous_text=hit.fact.text)
        )
    return planned


def _new_facts(extracted: Sequence[str], known: set[str], decided: DecidedBy) -> list[PlannedEdit]:
    planned = []
    for text in extracted:
        key = normalise(text)
        if key and key not in known:
            known.add(key)
            planned.append(PlannedEdit(EditOp.ADD, text, decided))
    return planned


# What decided a rag passage: no model, only the splitting rule.
RAG_DECIDED = DecidedBy(model="none", prompt_version="rag_passages.v1")


async def edit_document(doc: Document, ctx: EditContext) -> EditPlan:
    """Decide the edits ``doc`` makes to its namespace's knowledge base.

    Over the blast radius (more invalidations and rewrites than ``max_edits``), the plan
    stops after classification, is marked ``over_limit`` and carries no edits.

    The paper's baselines (``settings.method``) decide adds only: ``rag`` the document's
    passages without the LM, ``fact-rag`` the extracted facts without retrieval or editing.
    """
    view = _view(doc)
    timings: dict[str, float] = {}
    if ctx.settings.method == "rag":
        texts = passages(doc.text, ctx.settings.passage_chars)
        planned = [PlannedEdit(EditOp.ADD, text, RAG_DECIDED) for text in texts]
        return EditPlan(doc, [], [], planned, over_limit=False, timings=timings)
    hits = [] if ctx.settings.method == "fact-rag" else await _retrieve(doc, ctx, timings)
    if ctx.settings.method != "fact-rag":
        # The audit trail of the blast radius: the only facts this document may edit.
        ids = " ".join(hit.fact.fact_id for hit in hits) or "-"
        log.info("candidates for %r in %s: %s", doc.id, doc.namespace, ids)
    plan = EditPlan(doc, hits, [], [], over_limit=False, timings=timings)
    if hits:
        with timed(plan.timings, "classify"):
            classified = await _classify(view, hits, ctx)
        plan.labels = classified.value
        plan.spend("classify", classified.usage)
        decided = _decided(classified)
        labelled = list(zip(hits, plan.labels, strict=True))
        false = [hit for hit, label in labelled if label == "make_false"]
        if len(false) > ctx.settings.max_edits:
            plan.over_limit = True
            return plan
        plan.planned += [
            PlannedEdit(EditOp.REINFORCE, hit.fact.text, decided, hit.fact.fact_id)
            for hit, label in labelled
            if label == "reinforce"
        ]
        still_true = [hit.fact.text for hit, label in labelled if label != "make_false"]
        with timed(plan.timings, "rewrite"):
            plan.planned += await _rewrites(plan, false, still_true, ctx)
    with timed(plan.timings, "extract"):
        extracted = await extract_new_facts(ctx.runner, view)
    plan.spend("extract", extracted.usage)
    # Skip new facts that only restate a fact just reinforced or rewritten (ERASE A.2).
    known = {normalise(p.text) for p in plan.planned if p.op in (EditOp.REINFORCE, EditOp.REWRITE)}
    plan.planned += _new_facts(extracted.value, known, _decided(extracted))
    return plan


def bound_problem(plan: EditPlan, max_edits: int) -> str | None:
    """Why ``plan`` breaks the blast radius (docs/design.md section 3), or None if it keeps it.

    Checked on the finished plan, whatever built it: an edit of an existing fact must name
    a fact retrieval returned for this document, and at most ``max_edits`` edits may make a
    fact false (invalidate or rewrite).
    """
    false = sum(label == "make_false" for label in plan.labels)
    if plan.over_limit:
        return f"makes {false} facts false (limit {max_edits})"
    retrieved = {hit.fact.fact_id for hit in plan.retrieved}
    outside = sorted({p.fact_id for p in plan.planned if p.fact_id and p.fact_id not in retrieved})
    if outside:
        return f"edits {len(outside)} facts retrieval did not return: {' '.join(outside[:5])}"
    destructive = sum(p.op in (EditOp.INVALIDATE, EditOp.REWRITE) for p in plan.planned)
    if destructive > max_edits:
        return f"makes {destructive} facts false (limit {max_edits})"
    return None


def batch_id_for(doc: Document, planned: Sequence[PlannedEdit]) -> str:
    """Identifies one decided batch: two different batches for one document differ here."""
    digest = hashlib.sha256(doc.id.encode())
    for p in planned:
        digest.update(f"\x1e{p.op.value}\x1f{p.fact_id}\x1f{p.text}".encode())
    return f"{doc.id}@{digest.hexdigest()[:16]}"


def to_records(plan: EditPlan, source: InputRef, now: datetime | None = None) -> list[FactEdit]:
    """The plan's batch as changelog records, with deterministic ids."""
    doc, created = plan.document, now or datetime.now(UTC)
    batch_id, size = batch_id_for(doc, plan.planned), len(plan.planned)
    records = []
    for pos, p in enumerate(plan.planned):
        # Reinforce and invalidate edit the existing fact; add and rewrite make a new one.
        edits_existing = p.op in (EditOp.REINFORCE, EditOp.INVALIDATE)
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
            )
        )
    return records
