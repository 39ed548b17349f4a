"""`eval update-retrieval`: does the editor's retrieval find the fact a document supersedes?

No LM: the CLARK-News triples are verbalised as facts and inserted at their documents'
times into a fresh namespace; then, for every (subject, relation) whose object changes, the
editor's own retrieval runs for the document that states the newer object, as of just
before that document, and the stale fact's rank is recorded. Retrieval during updating
caused the largest share of ERASE's errors (40% in the paper's error analysis).
"""

from __future__ import annotations

import statistics
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from factstream.config import EditorSettings
from factstream.edit.retrieval import Retrieval, Where, pool_depth, ranked_candidates
from factstream.embed.base import Embedder
from factstream.store.base import FactStore, StoredFact
from factstream.temporal.intervals import ValidInterval
from factstream.text.names import document_title
from factstream.topics.records import Fact, HistoryEntry
from factstream_lab.eval.datasets import Change, Clark, ClarkDocument, verbalise

__all__ = [
    "KS",
    "RetrievalReport",
    "closings",
    "evaluate_update_retrieval",
    "load_facts",
    "retrieval_variants",
    "scored_changes",
]

KS = (1, 5, 10, 20)
_IDS = uuid.uuid5(uuid.NAMESPACE_URL, "https://factstream.dev/eval/clark-triples")


@dataclass
class RetrievalReport:
    """Recall of the stale fact at several depths, and the cost, for one retrieval variant."""

    config: Retrieval
    changes: int = 0  # superseded facts scored: those already in the KB when superseded
    not_in_kb: int = 0  # changes left out: the stale fact's document comes later in the stream
    recall_at: dict[int, float] = field(default_factory=dict)
    # Ranked within the first n, n the changes its document makes: a chunk that moves
    # someone and changes their job supersedes two facts, and only one can rank first.
    recall_at_n: float = 0.0
    # The best recall@1 possible: one change per document can rank first, so the share of
    # changes whose documents are distinct (1.0 when every document makes one change).
    ceiling_at_1: float = 0.0
    documents_first: float = 0.0  # share of those documents with one of their stale facts first
    above_floor: float = 0.0  # share of stale facts whose similarity clears the floor
    editor_recall: float = 0.0  # what the editor's own retrieval (top_k, floor) returns
    shown_mean: float = 0.0  # facts the editor shows the LM per document (the blast radius)
    ms_mean: float = 0.0  # retrieval time per document (embedding included)
    ms_p95: float = 0.0
    ranks: list[int | None] = field(default_factory=list)  # per change; None: not in the top 20
    seen: list[bool] = field(default_factory=list)  # per change: whether the editor sees it


def retrieval_variants(editor: EditorSettings) -> list[Retrieval]:
    """The configured retrieval first, the earlier ones, then each stage changed alone."""
    best = Retrieval.from_settings(editor).but("configured")
    earlier = best.but(
        "issue 20's first default (names, subject lift)",
        title=False,
        relation_lift=0.0,
        object_lift=0.0,
        older_drop=0.0,
        subject_cap=0,
        floor_margin=0.0,
        restated_drop=0.0,
        title_lift=0.0,
        filler_lift=0.0,
    )
    return [
        best,
        best.but("store hybrid, no rerank (before issue 20)", first_stage=0),
        earlier,
        best.but("no title query", title=False),
        best.but("no drop for older facts", older_drop=0.0),
        best.but("older facts drop 0.1", older_drop=0.1),
        best.but("no subject cap", subject_cap=0),
        best.but("no relation cue", relation_lift=0.0),
        best.but("no drop for restated facts", restated_drop=0.0),
        *(
            best.but(f"restated facts drop {drop:g}", restated_drop=drop)
            for drop in (0.1, 0.3)
            if drop != best.restated_drop
        ),
        best.but(
            "restated drop over the whole ranking"
            if best.restated_view
            else "restated drop sorts the editor's view only",
            restated_view=not best.restated_view,
        ),
        best.but("title lift 0.1", title_lift=0.1)
        if not best.title_lift
        else best.but("no title lift", title_lift=0.0),
        best.but("no object lift", object_lift=0.0),
        best.but("object lift 0.3", object_lift=0.3),
        best.but("adaptive floor: margin 0.1", floor_margin=0.1),
        best.but("adaptive floor: margin 0.2", floor_margin=0.2),
        best.but("named facts below floor cut", named_pass=False),
        best.but("no names query", names_query=False)
        if best.names_query
        else best.but("names query", names_query=True),
        best.but("sentence queries (8)", sentences=8),
        best.but("rank by reciprocal rank", rank="rrf"),
        best.but("first stage 150", first_stage=150),
        best.but("dense first stage", alpha=1.0),
        best.but("no speaker names (surnames name anyone)", speaker_names=False),
        best.but(
            "no given names" if best.given_names else "given names (a surname before a name)",
            given_names=not best.given_names,
        ),
        *(
            best.but(f"statement lift {lift:g}", statement_lift=lift)
            for lift in (0.0, 1.0, 2.0)
            if lift != best.statement_lift
        ),
        *(
            best.but("no filler cue" if not lift else f"filler cue {lift:g}", filler_lift=lift)
            for lift in (0.0, 0.5, 1.0)
            if lift != best.filler_lift
        ),
        best.but(
            "full names name no one else by surname" if not best.full_names else "no full names",
            full_names=not best.full_names,
        ),
    ]


def _fact_id(triple_index: int) -> str:
    return str(uuid.uuid5(_IDS, str(triple_index)))


def closings(clark: Clark) -> dict[int, ClarkDocument]:
    """Each superseded triple and the document that supersedes it (the first, if several)."""
    found: dict[int, ClarkDocument] = {}
    for change in clark.changes():
        doc = clark.documents[change.new.document_id]
        old = found.get(change.stale.index)
        if old is None or doc.position < old.position:
            found[change.stale.index] = doc
    return found


def _facts(clark: Clark, namespace: str, *, edited: bool) -> list[Fact]:
    closed_by = closings(clark) if edited else {}
    facts = []
    for triple in clark.triples:
        doc = clark.documents.get(triple.document_id)
        if doc is None:
            continue
        ts = doc.stream_time
        history = [HistoryEntry(ts=ts, truth=True, document_id=doc.id, edit_id=f"e-{triple.index}")]
        closer = closed_by.get(triple.index)
        if closer is not None and closer.position > doc.position:
            edit = f"c-{triple.index}"
            history.append(
                HistoryEntry(
                    ts=closer.stream_time, truth=False, document_id=closer.id, edit_id=edit
                )
            )
        facts.append(
            Fact(
                fact_id=_fact_id(triple.index),
                namespace=namespace,
                text=verbalise(triple),
                truth=history[-1].truth,
                history=history,
                first_seen=ts,
                last_changed=history[-1].ts,
                subject=triple.subject,
                relation=triple.relation,
                object=triple.object,
            )
        )
    return facts


async def load_facts(
    store: FactStore, embedder: Embedder, clark: Clark, namespace: str, *, edited: bool = False
) -> int:
    """Insert every triple of the stream as a fact, true from its document's time.

    ``edited``: each superseded fact turns false when the document superseding it arrives
    (the KB a perfect editor keeps); otherwise every fact stays true (the stream alone).
    """
    facts = _facts(clark, namespace, edited=edited)
    vectors = await embedder.embed_batch([f.text for f in facts])
    await store.upsert(namespace, [StoredFact(f, v) for f, v in zip(facts, vectors, strict=True)])
    return len(facts)


async def _retrieve(
    store: FactStore,
    embedder: Embedder,
    namespace: str,
    change: Change,
    clark: Clark,
    how: Retrieval,
) -> tuple[int | None, bool, float, int]:
    """The stale fact's rank without a floor (None past 20), whether the editor sees it, ms,
    and how many facts the editor sees.

    The editor's own code (``ranked_candidates``), as of just before the document.
    """
    doc = clark.documents[change.new.document_id]
    as_of = doc.stream_time - timedelta(microseconds=1)  # the KB just before the document
    started = time.perf_counter()
    where = Where(namespace, as_of, ValidInterval(as_of, None))  # as the editor asks
    depth = max(max(KS), pool_depth(how))
    title = document_title(doc.title, doc.source)
    ranked = await ranked_candidates(
        store, embedder, where, doc.text, how, depth=depth, title=title
    )
    ms = 1000 * (time.perf_counter() - started)
    ids = [c.hit.fact.fact_id for c in ranked]
    seen = [c.hit.fact.fact_id for c in ranked if c.passes][: how.top_k]
    stale = _fact_id(change.stale.index)
    rank = ids.index(stale) + 1 if stale in ids[: max(KS)] else None
    return rank, stale in seen, ms, len(seen)


def scored_changes(clark: Clark) -> list[Change]:
    """The changes scored, in stream order: those whose stale fact is in the KB by then."""
    every = sorted(clark.changes(), key=lambda c: clark.documents[c.new.document_id].position)
    return [c for c in every if _in_kb(clark, c)]


def _in_kb(clark: Clark, change: Change) -> bool:
    """Whether the stale fact is in the KB when the superseding document arrives."""
    stale = clark.documents.get(change.stale.document_id)
    return stale is not None and stale.position < clark.documents[change.new.document_id].position


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def evaluate_update_retrieval(
    store: FactStore,
    embedder: Embedder,
    clark: Clark,
    namespace: str,
    configs: Sequence[Retrieval],
    limit: int | None = None,
    tick: Callable[[], None] | None = None,
) -> list[RetrievalReport]:
    """Score each configuration on every change (the first ``limit`` in stream order)."""
    every = sorted(clark.changes(), key=lambda c: clark.documents[c.new.document_id].position)
    every = every[:limit] if limit is not None else every
    changes = [c for c in every if _in_kb(clark, c)]
    doc_vectors = await embedder.embed_batch(
        [clark.documents[c.new.document_id].text for c in changes]
    )
    fact_vectors = await embedder.embed_batch([verbalise(c.stale) for c in changes])
    similarity = [_cosine(d, f) for d, f in zip(doc_vectors, fact_vectors, strict=True)]
    per_document = Counter(c.new.document_id for c in changes)
    reports = []
    for config in configs:
        report = RetrievalReport(config, len(changes), len(every) - len(changes))
        seen, times, shown = 0, [], []
        for change in changes:
            rank, in_view, ms, count = await _retrieve(
                store, embedder, namespace, change, clark, config
            )
            report.ranks.append(rank)
            report.seen.append(in_view)
            seen += in_view
            times.append(ms)
            shown.append(count)
            if tick is not None:
                tick()
        n = max(1, len(changes))
        report.recall_at_n = (
            sum(
                r is not None and r <= per_document[c.new.document_id]
                for c, r in zip(changes, report.ranks, strict=True)
            )
            / n
        )
        firsts = {c.new.document_id for c, r in zip(changes, report.ranks, strict=True) if r == 1}
        report.ceiling_at_1 = len(per_document) / n
        report.documents_first = len(firsts) / max(1, len(per_document))
        report.recall_at = {k: sum(r is not None and r <= k for r in report.ranks) / n for k in KS}
        report.above_floor = sum(s >= config.min_similarity for s in similarity) / n
        report.editor_recall = seen / n
        report.shown_mean = statistics.fmean(shown) if shown else 0.0
        if times:
            report.ms_mean = statistics.fmean(times)
            report.ms_p95 = statistics.quantiles(times, n=20)[-1] if len(times) > 1 else times[0]
        reports.append(report)
    return reports
