"""The editor's candidates: the facts a document may edit, found from the document alone.

One code path for the live editor (``pipeline.edit_document``) and ``eval update-retrieval``.
Stages (each one a setting, so the evaluation can switch it off):

1. A first stage larger than ``top_k``: the store's hybrid search with the document's text
   and vector; optionally a BM25 query on the names the document contains
   (``names.document_names``);
   optionally one hybrid query per sentence. The pools are fused by reciprocal rank.
2. A cheap rerank: the cosine with the document (the best over the queries that found the
   fact), lifted for facts whose structured subject the document names (``subject_lift``;
   a fact without structure counts when its text contains one of the document's names) and
   for facts whose object it names (``object_lift``); in a conversation, for facts whose
   relation is alike to a line naming their subject (a speaker by "I") (``statement_lift``,
   ``statements.py``); or the fused reciprocal rank itself. Ties go to the newer fact.
3. The floor: a fact passes with ``similarity >= min_similarity``, or when it is named.
   The editor sees the first ``top_k`` that pass: the blast radius stays short.

``first_stage`` 0 is the store's plain hybrid search (what the editor did before).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import lru_cache

from factstream.edit.fillers import filled
from factstream.edit.rerank import Candidate, capped, older_facts, view_resorted
from factstream.edit.retrieval_how import Retrieval
from factstream.edit.statements import (
    Statement,
    named_in,
    predicate,
    restated,
    speakers,
    statement_scores,
    statements,
)
from factstream.embed.base import Embedder
from factstream.resilience import gather_or_cancel
from factstream.store.base import FactStore, SearchHit, StoredFact
from factstream.temporal.intervals import ValidInterval
from factstream.text.names import document_names, leading_name, mentions
from factstream.topics.records import Fact

__all__ = [
    "Candidate",
    "Overlay",
    "Retrieval",
    "Where",
    "could_change",
    "editor_candidates",
    "pool_depth",
    "query_texts",
    "query_vectors",
    "ranked_candidates",
]

_RRF_K = 60  # the usual reciprocal-rank-fusion constant (Cormack et al., 2009)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_SEARCH_DEPTH = 5  # x top_k: enough ranked facts that top_k clear the floor
_MIN_SENTENCE = 20  # characters: shorter pieces ("..", dates) make no query of their own
_ROUNDING = 1e-9  # scores summed in another order may differ by this much
_STATEMENTS = 40  # sentences compared with the facts' predicates (statement_lift)


@dataclass(frozen=True)
class Where:
    """Whose facts, as of when: a namespace as of ``as_of``, held during ``valid``."""

    namespace: str
    as_of: datetime | None
    valid: ValidInterval | None = None


@dataclass(frozen=True)
class Overlay:
    """The knowledge base as predicted: the facts earlier documents still in flight will
    write (their planned new facts, with their vectors) and end (ids), over the store's.

    Retrieval through an overlay ranks the store's first stage with ``added`` in it and
    ``ended`` out, by the same rerank (agents/dependencies.py: a document decided against
    the predicted knowledge base). The store's first stage itself is not predicted (a new
    fact could push another out of its pool, or move BM25 statistics): a commit's check
    compares with the real retrieval.
    """

    added: Sequence[StoredFact] = ()
    ended: frozenset[str] = frozenset()


def _overlaid(
    runs: list[list[SearchHit]], overlay: Overlay, vectors: Sequence[Sequence[float]]
) -> list[list[SearchHit]]:
    """The first stage's runs with ``overlay``'s facts: ended and replaced ones out, the
    added ones in the first run at their best cosine with any query."""
    out = {stored.fact.fact_id for stored in overlay.added} | overlay.ended
    kept = [[hit for hit in run if hit.fact.fact_id not in out] for run in runs]
    for stored in overlay.added:
        similarity = max(_cosine(vector, stored.vector) for vector in vectors)
        kept[0].append(SearchHit(stored.fact, similarity, 0.0))
    return kept


@dataclass
class _Pooled:
    hit: SearchHit
    similarity: float
    fused: float = 0.0


def _sentences(text: str, limit: int) -> list[str]:
    pieces = [p.strip() for p in _SENTENCE.split(text)]
    return [p for p in pieces if len(p) >= _MIN_SENTENCE][:limit]


@lru_cache(maxsize=4096)
def _phrase(words: str, *, ignore_case: bool) -> re.Pattern[str]:
    flags = re.IGNORECASE if ignore_case else 0
    return re.compile(rf"(?<!\w){re.escape(words)}(?!\w)", flags)


def _lift(fact: Fact, texts: Sequence[str], how: Retrieval) -> float:
    """What the document's naming adds to a fact's score (0 when it names nothing of it)."""
    # Without a structured subject, the fact's first name stands for it.
    named = fact.subject if how.structured and fact.subject else leading_name(fact.text)
    subject = any(_named(text, named, how) for text in texts)
    lift = how.subject_lift if subject else 0.0
    if how.title_lift and len(texts) > 1 and _named(texts[1], named, how):
        lift += how.title_lift  # the headline's subject is what the document is about
    if not how.structured:
        return lift
    # The object by its full name: its head ("Member" of "Member of ...") names nothing.
    if how.object_lift and _spelt(fact.object, texts, ignore_case=False):
        lift += how.object_lift
    if how.relation_lift and _spelt(fact.relation, texts, ignore_case=True):
        lift += how.relation_lift
    return lift


def _named(
    text: str, name: str | None, how: Retrieval, *, voices: frozenset[str] | None = None
) -> bool:
    """Whether ``text`` names ``name`` (``how.speaker_names``: not by another speaker's;
    ``voices``, the speakers, of ``text`` when None)."""
    if how.speaker_names or how.given_names or how.full_names:
        return named_in(
            text,
            name,
            short=how.short_names,
            voices=voices if how.speaker_names else frozenset(),
            given=how.given_names,
            full=how.full_names,
        )
    return mentions(text, name, short=how.short_names)


def _spelt(words: str | None, texts: Sequence[str], *, ignore_case: bool) -> bool:
    """Whether one of ``texts`` spells out ``words`` as whole words."""
    return bool(words) and any(
        _phrase(words, ignore_case=ignore_case).search(text) for text in texts
    )


def query_texts(text: str, how: Retrieval, title: str | None = None) -> list[str]:
    """A document's retrieval queries: its text first, then its title (``how.title``) and
    its sentences (``how.sentences``); each finds facts by its own cosine."""
    title = title if how.title and how.first_stage else None
    if not how.first_stage:
        return [text]
    return [text, *([title] if title else []), *_sentences(text, how.sentences)]


async def query_vectors(
    embedder: Embedder,
    text: str,
    how: Retrieval,
    *,
    known: Sequence[Sequence[float]] = (),
    title: str | None = None,
) -> list[list[float]]:
    """The vectors of ``query_texts``: ``known`` for the first ones (the document text's
    embedding, computed ahead), the rest embedded in one call."""
    queries = query_texts(text, how, title)
    vectors = [list(v) for v in known[: len(queries)]]
    rest = queries[len(vectors) :]
    return vectors + (list(map(list, await embedder.embed_batch(rest))) if rest else [])


async def ranked_candidates(
    store: FactStore,
    embedder: Embedder,
    where: Where,
    text: str,
    how: Retrieval,
    *,
    depth: int | None = None,
    timings: dict[str, float] | None = None,
    vectors: Sequence[Sequence[float]] = (),
    title: str | None = None,
    overlay: Overlay | None = None,
) -> list[Candidate]:
    """The first ``depth`` facts (``top_k`` if None) in the order the editor ranks them.

    Unlike :func:`editor_candidates`, facts below the floor are kept (marked), for the
    evaluation's recall at depths past what the editor sees. ``title``: the document's
    title (``names.document_title``), a query of its own with ``how.title``. ``vectors``:
    the first queries' vectors (``query_vectors``) when the caller has them. ``overlay``:
    rank as if its facts were written and ended (first stage only).
    """
    depth = depth or how.top_k
    timings = timings if timings is not None else {}
    started = time.perf_counter()
    queries = query_texts(text, how, title)
    title = title if how.title and how.first_stage else None
    vectors = await query_vectors(embedder, text, how, known=vectors, title=title)
    embedded = time.perf_counter()
    timings["embed"] = timings.get("embed", 0.0) + embedded - started
    size = max(how.first_stage, depth)

    async def search(query: str, vector: Sequence[float], alpha: float, n: int) -> list[SearchHit]:
        return await store.search(
            where.namespace,
            query,
            vector,
            as_of=where.as_of,
            top_k=n,
            min_similarity=-1.0,
            alpha=alpha,
            valid=where.valid,
        )

    if not how.first_stage:
        if overlay is not None:
            raise ValueError("the store's plain hybrid search cannot be overlaid")
        hits = await search(text, vectors[0], how.alpha, depth)
        timings["retrieve"] = timings.get("retrieve", 0.0) + time.perf_counter() - embedded
        return [Candidate(h, h.similarity >= how.min_similarity) for h in hits]
    texts = [text, title] if title else [text]
    names = list(dict.fromkeys(n for t in texts for n in document_names(t)))
    searches = [search(q, v, how.alpha, size) for q, v in zip(queries, vectors, strict=True)]
    if how.names_query and names:
        # BM25 only, but the similarity is still the cosine with the document's vector.
        searches.append(search(" ".join(names), vectors[0], 0.0, size))
    # One request each, all at once (read-only; the runs keep the queries' order).
    runs = await gather_or_cancel(*searches)
    if overlay is not None:
        runs = _overlaid(runs, overlay, vectors)
    pool: dict[str, _Pooled] = {}
    hybrid = {hit.fact.fact_id: hit.score for hit in runs[0]}  # the document's own query
    for run in runs:
        for rank, hit in enumerate(run, 1):
            entry = pool.setdefault(hit.fact.fact_id, _Pooled(hit, hit.similarity))
            entry.similarity = max(entry.similarity, hit.similarity)
            entry.fused += _RRF_K / (_RRF_K + rank)  # 1.0 for a first place
    facts = [e.hit.fact for e in pool.values()]
    older = older_facts(facts) if how.older_drop else set()
    named = _statement_named(texts, how)
    refilled = filled(facts, texts, named, _STATEMENTS) if how.filler_lift else set()
    said = statements(texts, _STATEMENTS) if how.statement_lift else []
    matched = (
        await statement_scores(
            embedder,
            said,
            facts,
            short=how.short_names,
            text=text if how.speaker_names else "",
            given=how.given_names,
            full=how.full_names,
        )
        if said
        else {}
    )
    scored = []
    best = max((entry.similarity for entry in pool.values()), default=0.0)
    floor = max(how.min_similarity, best - how.floor_margin if how.floor_margin else -1.0)
    for entry in pool.values():
        lift = _lift(entry.hit.fact, texts, how)
        lift += how.filler_lift if entry.hit.fact.fact_id in refilled else 0.0
        base = {
            "cosine": entry.similarity,
            "hybrid": hybrid.get(entry.hit.fact.fact_id, 0.0),
            "rrf": entry.fused / len(runs),
        }[how.rank]
        drop = how.older_drop if entry.hit.fact.fact_id in older else 0.0
        if how.restated_drop and not how.restated_view and _restates(entry.hit.fact, texts, how):
            drop += how.restated_drop
        said_lift = how.statement_lift * max(0.0, matched.get(entry.hit.fact.fact_id, 0.0))
        score = base + lift + said_lift - drop
        hit = replace(entry.hit, similarity=entry.similarity, score=score)
        passes = entry.similarity >= floor or (how.named_pass and lift > 0)
        scored.append(Candidate(hit, passes))
    # Ties go to the newer fact, then to the fact id: never to the store's order of equals.
    scored.sort(
        key=lambda c: (-c.hit.score, -c.hit.fact.first_seen.timestamp(), c.hit.fact.fact_id)
    )
    if how.subject_cap:
        scored = capped(scored, how.subject_cap)
    if how.restated_drop and how.restated_view:
        scored = view_resorted(
            scored, how.top_k, lambda fact: how.restated_drop * _restates(fact, texts, how)
        )
    timings["retrieve"] = timings.get("retrieve", 0.0) + time.perf_counter() - embedded
    return scored[:depth]


def _restates(fact: Fact, texts: Sequence[str], how: Retrieval) -> bool:
    return restated(fact, texts, lambda text, name: _named(text, name, how))


async def editor_candidates(
    store: FactStore,
    embedder: Embedder,
    where: Where,
    text: str,
    how: Retrieval,
    timings: dict[str, float] | None = None,
    *,
    vectors: Sequence[Sequence[float]] = (),
    title: str | None = None,
    overlay: Overlay | None = None,
) -> list[SearchHit]:
    """The facts the editor shows the LM for a document: at most ``top_k``, all past the floor.

    ``vectors``: its first queries' vectors when the caller has them (``query_vectors``;
    not embedded again); ``title``: its title (``names.document_title``).
    """
    depth = pool_depth(how)
    ranked = await ranked_candidates(
        store,
        embedder,
        where,
        text,
        how,
        depth=depth,
        timings=timings,
        vectors=vectors,
        title=title,
        overlay=overlay,
    )
    return [c.hit for c in ranked if c.passes][: how.top_k]


def pool_depth(how: Retrieval) -> int:
    """How many ranked facts to look through for ``top_k`` past the floor."""
    return max(how.first_stage, _SEARCH_DEPTH * how.top_k)


def could_change(
    seen: Sequence[SearchHit],
    text: str,
    vectors: Sequence[Sequence[float]],
    changed: Sequence[StoredFact],
    how: Retrieval,
    title: str | None = None,
) -> bool:
    """Whether facts just ``changed`` (new states, with their vectors) may change the
    candidates ``seen`` of a document (its ``text``, ``title`` and its queries' ``vectors``,
    ``query_vectors``), without retrieving.

    A cheap test from the ranking's rules, for deciding when to retrieve again early
    (agents/speculation.py); it never decides what the editor shows the LM, which only a
    retrieval does. A changed fact among the candidates may change them; another may enter
    when it clears the floor and ranks at least as high as the last of ``top_k``
    candidates (the newer fact wins a tie); one newer than a candidate of its subject and
    relation may drop it (``older_drop``); with a subject cap in play (a subject holding
    ``subject_cap`` candidates) any fact that clears the floor may. Ranks other than the
    cosine's, and the adaptive floor, are not predicted: any change may change them. A
    fact's cosine is its best with any of the queries (the rank's); without every query's
    vector it may be any, so any change may change them.
    """
    if not changed:
        return False
    if how.rank != "cosine" or not how.first_stage or how.floor_margin:
        return True
    if len(vectors) < len(query_texts(text, how, title)):
        return True
    texts = [text, title] if title and how.title else [text]
    ids = {hit.fact.fact_id for hit in seen}
    groups = {(hit.fact.subject, hit.fact.relation) for hit in seen if hit.fact.relation}
    per_subject: dict[str | None, int] = {}
    for hit in seen:
        per_subject[hit.fact.subject] = per_subject.get(hit.fact.subject, 0) + 1
    capped = bool(how.subject_cap) and any(
        subject and count >= how.subject_cap for subject, count in per_subject.items()
    )
    last = min((hit.score for hit in seen), default=None) if len(seen) >= how.top_k else None
    # The document's statements and who they name, the same for every changed fact.
    said, named = statements(texts, _STATEMENTS), _statement_named(texts, how)
    for stored in changed:
        fact = stored.fact
        if fact.fact_id in ids:
            return True
        if how.older_drop and fact.relation and (fact.subject, fact.relation) in groups:
            return True
        similarity = max(_cosine(vector, stored.vector) for vector in vectors)
        lift = _lift(fact, texts, how)
        passes = similarity >= how.min_similarity or (how.named_pass and lift > 0)
        bound = _said_bound(fact, said, named, how)
        if how.filler_lift and _filler_said(fact, said):
            return True  # a new filler the document names may lift other candidates
        # A tie goes to the newer fact; exact lifts (the filler cue's) tie but for rounding.
        if passes and (capped or last is None or similarity + lift + bound >= last - _ROUNDING):
            return True
    return False


def _said_bound(
    fact: Fact, said: Sequence[Statement], named: Callable[[str, str | None], bool], how: Retrieval
) -> float:
    """The most the statement lift and the filler cue may add to ``fact``: their weights,
    when a statement of the document (``said``) names (``named``) the subject of a fact with
    a predicate (as ``statement_scores`` and ``fillers.filled`` ask)."""
    if predicate(fact) is None:
        return 0.0
    lifts = how.statement_lift + (how.filler_lift if fact.object else 0.0)
    if not lifts:
        return 0.0
    return lifts if any(named(s.naming, fact.subject) for s in said) else 0.0


def _filler_said(fact: Fact, said: Sequence[Statement]) -> bool:
    """Whether a statement of the document (``said``) spells out ``fact``'s object (a
    filler)."""
    return any(fact.object in s.said for s in said) if fact.object else False


def _statement_named(texts: Sequence[str], how: Retrieval) -> Callable[[str, str | None], bool]:
    """Whether a statement's naming text names someone: the document's speakers name only
    themselves (``how.speaker_names``), as ``statement_scores`` decides."""
    voices = speakers(texts[0])
    return lambda naming, name: _named(naming, name, how, voices=voices)


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0
