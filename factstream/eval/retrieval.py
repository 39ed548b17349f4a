"""`eval update-retrieval`: does the editor's retrieval find the fact a document supersedes?

No LM: the CLARK-News triples are verbalised as facts and inserted at their documents'
times into a fresh namespace; then, for every (subject, relation) whose object changes, the
editor's own retrieval runs for the document that states the newer object, as of just
before that document, and the stale fact's rank is recorded. Retrieval during updating
caused the largest share of ERASE's errors (40% in the paper's error analysis).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from factstream.config import EditorSettings
from factstream.embed.base import Embedder
from factstream.eval.datasets import Change, Clark, verbalise
from factstream.store.base import FactStore, StoredFact
from factstream.topics.records import Fact, HistoryEntry

__all__ = [
    "KS",
    "RetrievalConfig",
    "RetrievalReport",
    "evaluate_update_retrieval",
    "load_facts",
    "retrieval_configs",
]

KS = (1, 5, 10, 20)
_IDS = uuid.uuid5(uuid.NAMESPACE_URL, "https://factstream.dev/eval/clark-triples")


@dataclass(frozen=True)
class RetrievalConfig:
    """One retrieval configuration to score."""

    name: str
    alpha: float  # 1.0: dense only
    top_k: int  # the editor's top_k (the floor and this decide what the LM sees)
    min_similarity: float


@dataclass
class RetrievalReport:
    """Recall of the stale fact at several depths, for one configuration."""

    config: RetrievalConfig
    changes: int = 0  # superseded facts scored: those already in the KB when superseded
    not_in_kb: int = 0  # changes left out: the stale fact's document comes later in the stream
    recall_at: dict[int, float] = field(default_factory=dict)
    above_floor: float = 0.0  # share of stale facts whose similarity clears the floor
    editor_recall: float = 0.0  # what the editor's own search (top_k, floor) returns: fixable
    ranks: list[int | None] = field(default_factory=list)  # per change; None: not in the top 20


def retrieval_configs(editor: EditorSettings) -> list[RetrievalConfig]:
    """The configured hybrid retrieval and its dense-only variant."""
    return [
        RetrievalConfig(
            f"hybrid (alpha {editor.alpha})", editor.alpha, editor.top_k, editor.min_similarity
        ),
        RetrievalConfig("dense only", 1.0, editor.top_k, editor.min_similarity),
    ]


def _fact_id(triple_index: int) -> str:
    return str(uuid.uuid5(_IDS, str(triple_index)))


def _facts(clark: Clark, namespace: str) -> list[Fact]:
    facts = []
    for triple in clark.triples:
        doc = clark.documents.get(triple.document_id)
        if doc is None:
            continue
        ts = doc.stream_time
        entry = HistoryEntry(ts=ts, truth=True, document_id=doc.id, edit_id=f"eval-{triple.index}")
        facts.append(
            Fact(
                fact_id=_fact_id(triple.index),
                namespace=namespace,
                text=verbalise(triple),
                truth=True,
                history=[entry],
                first_seen=ts,
                last_changed=ts,
                subject=triple.subject,
                relation=triple.relation,
                object=triple.object,
            )
        )
    return facts


async def load_facts(store: FactStore, embedder: Embedder, clark: Clark, namespace: str) -> int:
    """Insert every triple of the stream as a fact, true from its document's time."""
    facts = _facts(clark, namespace)
    vectors = await embedder.embed_batch([f.text for f in facts])
    await store.upsert(namespace, [StoredFact(f, v) for f, v in zip(facts, vectors, strict=True)])
    return len(facts)


async def _retrieve(
    store: FactStore,
    namespace: str,
    change: Change,
    clark: Clark,
    vector: Sequence[float],
    config: RetrievalConfig,
) -> tuple[int | None, bool]:
    """The stale fact's rank without a floor (None past 20), and whether the editor sees it."""
    doc = clark.documents[change.new.document_id]
    as_of = doc.stream_time - timedelta(microseconds=1)  # the KB just before the document

    async def ids(top_k: int, floor: float) -> list[str]:
        hits = await store.search(
            namespace,
            doc.text,
            vector,
            as_of=as_of,
            top_k=top_k,
            min_similarity=floor,
            alpha=config.alpha,
        )
        return [hit.fact.fact_id for hit in hits]

    stale = _fact_id(change.stale.index)
    ranked = await ids(max(KS), -1.0)
    rank = ranked.index(stale) + 1 if stale in ranked else None
    return rank, stale in await ids(config.top_k, config.min_similarity)


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
    configs: Sequence[RetrievalConfig],
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
    reports = []
    for config in configs:
        report = RetrievalReport(config, len(changes), len(every) - len(changes))
        seen = 0
        for change, vector in zip(changes, doc_vectors, strict=True):
            rank, in_view = await _retrieve(store, namespace, change, clark, vector, config)
            report.ranks.append(rank)
            seen += in_view
            if tick is not None:
                tick()
        n = max(1, len(changes))
        report.recall_at = {k: sum(r is not None and r <= k for r in report.ranks) / n for k in KS}
        report.above_floor = sum(s >= config.min_similarity for s in similarity) / n
        report.editor_recall = seen / n
        reports.append(report)
    return reports
