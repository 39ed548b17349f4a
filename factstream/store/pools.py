"""Small namespaces pooled: many namespaces' rows in one Weaviate tenant (issue 40).

A tenant per namespace puts every namespace in Weaviate's schema, which every node keeps
(1.23 KiB of live heap and a never-freed lock per tenant: docs/operations.md). With
``FACTSTREAM_STORE_POOLS`` = P > 0 the store puts each namespace into one of P pool tenants
(in both collections), chosen by a hash of its name (:func:`pool_of`: deterministic, the
same in every process and after a restart, independent of the Kafka partitions), and its
rows carry a filterable ``namespace`` property that every read and delete filters on.

Search statistics must stay the namespace's own, or a namespace's ranking would move with
its pool neighbours' texts (BM25's IDF counts every object of the tenant). So a pooled
namespace's search reads all of its rows (bounded: :data:`POOLED_MAX_FACTS`) and ranks
them here as the store's hybrid search ranks a tenant's (:func:`hybrid_ranked`): BM25 over
the namespace's rows alone (Weaviate's word tokenization, English stopwords left out of the
query, its IDF and ``k1``/``b``), the cosine, and Weaviate's relative score fusion of the
two candidate lists. Where this differs from Weaviate's own ranking is said at each step.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "HYBRID_SIDE_MIN",
    "POOLED_MAX_FACTS",
    "POOL_PREFIX",
    "Ranked",
    "hybrid_ranked",
    "is_pool",
    "pool_of",
    "words",
]

# Tenant names of pools; a namespace starts with a letter or digit (NAMESPACE_PATTERN), so
# none can be taken for a pool.
POOL_PREFIX = "_pool-"
# The most rows a pooled namespace's search reads: one under Weaviate's QUERY_MAXIMUM_RESULTS,
# so that reading one more shows a namespace past it, which belongs in a tenant of its own
# (promotion, not built: the search refuses).
POOLED_MAX_FACTS = 9_999

# Weaviate's "en" stopword preset (its default), left out of BM25 queries.
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)
# Each side of Weaviate's hybrid search keeps at least this many candidates before the
# fusion (measured against v1.38.14: a limit of 13 fuses the best 100 of each side).
HYBRID_SIDE_MIN = 100
# Weaviate's "word" tokenization: runs of letters and digits, lower-cased.
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def pool_of(namespace: str, pools: int) -> str:
    """The pool tenant of ``namespace`` among ``pools`` (a stable hash: BLAKE2b of the name;
    changing ``pools`` moves namespaces, so it is fixed for a store's life)."""
    if pools < 1:
        raise ValueError("pools must be at least 1")
    digest = hashlib.blake2b(namespace.encode(), digest_size=8).digest()
    return f"{POOL_PREFIX}{int.from_bytes(digest, 'big') % pools:05d}"


def is_pool(tenant: str) -> bool:
    """Whether a tenant name is a pool's (not a namespace's own tenant)."""
    return tenant.startswith(POOL_PREFIX)


def words(text: str) -> list[str]:
    """``text`` as Weaviate's word tokenization indexes it."""
    return [w.lower() for w in _WORD.findall(text)]


@dataclass(frozen=True)
class Ranked:
    """One candidate's place: its index in the input, the fused score."""

    index: int
    score: float


def hybrid_ranked(
    texts: Sequence[str],
    cosines: Sequence[float],
    candidates: Sequence[int],
    query: str,
    *,
    alpha: float,
    max_distance: float | None,
    limit: int,
    k1: float,
    b: float,
) -> list[Ranked]:
    """The hybrid ranking of ``candidates`` (indexes into ``texts``/``cosines``), by fused
    score, as Weaviate's relative score fusion ranks a tenant holding ``texts`` alone.

    BM25's statistics (the object count, each word's document frequency, the mean length)
    are those of all ``texts``: every row of the namespace, true or not, as a tenant's
    inverted index counts its objects. Each side keeps its best ``limit`` or
    :data:`HYBRID_SIDE_MIN`, whichever is more (the vector side only those within
    ``max_distance``, 1 - cosine; the keyword side only those matching a word and, with a
    ``max_distance``, only those the vector side kept), its scores
    min-max normalised to [0, 1] (all equal: each 1), weighted ``alpha`` (vector) and
    ``1 - alpha`` (keyword), and summed. Differences from Weaviate's own: its index may
    still count replaced versions of an object until a compaction (here only the current
    ones), it computes cosines in float32, and it fuses over the filter's superset where
    this is given the exact candidates.
    """
    fused: dict[int, float] = {}
    side = max(limit, HYBRID_SIDE_MIN)
    inside: set[int] | None = None
    if alpha > 0:
        vector = [
            (cosines[i], i)
            for i in candidates
            if max_distance is None or 1.0 - cosines[i] <= max_distance
        ]
        kept = sorted(vector, key=lambda s: -s[0])[:side]
        _fuse(fused, kept, alpha)
        if max_distance is not None:
            inside = {i for _, i in kept}
    asked = Counter(w for w in words(query) if w not in _STOPWORDS)
    if alpha < 1 and asked:
        keyword = sorted(_bm25(texts, candidates, asked, k1, b), key=lambda s: -s[0])[:side]
        if inside is not None:
            # With a distance cut Weaviate keeps only the keyword hits its vector side kept
            # (v1.38's hybrid explorer; read from its source for bench.ask_overlap).
            keyword = [(score, i) for score, i in keyword if i in inside]
        _fuse(fused, keyword, 1.0 - alpha)
    ranked = [Ranked(i, score) for i, score in fused.items()]
    ranked.sort(key=lambda r: -r.score)
    return ranked[:limit]


def _bm25(
    texts: Sequence[str], candidates: Sequence[int], asked: Counter[str], k1: float, b: float
) -> list[tuple[float, int]]:
    """The candidates matching a word of ``asked``, with their BM25 scores over ``texts``
    (each text tokenized once; a word asked twice counts twice)."""
    tokens = [Counter(words(text)) for text in texts]
    lengths = [sum(counts.values()) for counts in tokens]
    n_docs = len(texts)
    mean_len = sum(lengths) / n_docs if n_docs else 0.0
    idf = {}
    for word in asked:
        n = sum(1 for counts in tokens if word in counts)
        idf[word] = math.log(1.0 + (n_docs - n + 0.5) / (n + 0.5))
    scored = []
    for i in candidates:
        tf = tokens[i]
        norm = 1.0 - b + b * (lengths[i] / mean_len if mean_len else 1.0)
        score = sum(
            times * idf[word] * tf[word] * (k1 + 1.0) / (tf[word] + k1 * norm)
            for word, times in asked.items()
            if word in tf
        )
        if score > 0:
            scored.append((score, i))
    return scored


def _fuse(into: dict[int, float], side: list[tuple[float, int]], weight: float) -> None:
    """Add one side's min-max normalised scores, times ``weight``, to ``into``."""
    if not side:
        return
    top, bottom = side[0][0], side[-1][0]
    for score, i in side:
        share = 1.0 if top == bottom else (score - bottom) / (top - bottom)
        into[i] = into.get(i, 0.0) + weight * share
