"""Semantics every FactStore shares: truth at a time, valid time, the floor, the listing order."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from datetime import datetime

import numpy as np

from factstream.errors import StoreError, StoreWriteFailed
from factstream.store.base import StoredFact
from factstream.temporal.intervals import ValidInterval
from factstream.topics.records import Fact

__all__ = [
    "check_list_limit",
    "check_namespace",
    "check_search_args",
    "check_write",
    "cosine",
    "odd_dimensions",
    "similarities",
    "similarity",
    "order_key",
    "valid_during",
    "valid_interval",
    "visible",
]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors (not assumed normalised); 0.0 if either is all zeros.

    Raises:
        ValueError: the vectors differ in length.
    """
    if len(a) != len(b):
        raise ValueError(f"vectors of different dimensions: {len(a)} and {len(b)}")
    norms = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    if norms == 0.0:
        return 0.0
    return math.fsum(x * y for x, y in zip(a, b, strict=True)) / norms


def similarity(query: Sequence[float], stored: Sequence[float]) -> float:
    """The cosine of a query vector and a stored one, as a search reports it.

    Raises:
        StoreError: the query vector does not have the namespace's dimension.
    """
    try:
        return cosine(query, stored)
    except ValueError as exc:
        raise StoreError(f"query vector does not fit the namespace: {exc}") from exc


def similarities(query: Sequence[float], stored: Sequence[Sequence[float]]) -> list[float]:
    """``similarity`` of the query and each stored vector, at once (numpy; a search's
    candidates: dozens of vectors whose cosines one by one in Python cost milliseconds).

    Raises:
        StoreError: a vector does not have the query's dimension.
    """
    if not stored:
        return []
    q = np.asarray(query, dtype=np.float64)
    try:
        m = np.asarray(stored, dtype=np.float64)
    except ValueError as exc:  # ragged rows
        raise StoreError(f"stored vectors of different dimensions: {exc}") from exc
    if m.ndim != 2 or m.shape[1] != q.shape[0]:
        raise StoreError(
            f"query vector does not fit the namespace: {q.shape[0]} and {m.shape[-1]} dimensions"
        )
    norms = np.linalg.norm(m, axis=1) * np.linalg.norm(q)
    dots = m @ q
    cos = np.divide(dots, norms, out=np.zeros_like(dots), where=norms != 0.0)
    result: list[float] = cos.tolist()
    return result


def visible(fact: Fact, as_of: datetime | None, *, include_false: bool = False) -> bool:
    """Whether a listing or search shows ``fact``.

    Args:
        fact: the fact.
        as_of: the event time asked about; None means now (the current truth).
        include_false: show false facts too; with ``as_of`` only facts already seen at
            ``as_of`` are shown, whatever their truth then.

    Returns:
        True when the fact is shown.
    """
    if as_of is None:
        return include_false or fact.truth
    truth = fact.truth_at(as_of)
    return truth is not None and (include_false or truth)


def valid_interval(fact: Fact, as_of: datetime | None = None) -> ValidInterval:
    """When ``fact`` held in the world, as known at ``as_of`` (None: now).

    ``[valid_from, valid_to)``, a missing end open. A fact with neither end (written before
    valid time existed, or whose interval nobody knows) is valid from its ``first_seen``, so
    existing namespaces read as they did. An end set by a world change after ``as_of``
    (``closed_at``) was not known then: the interval reads open at that end.
    """
    if fact.valid_from is None and fact.valid_to is None:
        return ValidInterval(fact.first_seen, None)
    end = fact.valid_to
    if as_of is not None and fact.closed_at is not None and fact.closed_at > as_of:
        end = None
    return ValidInterval(fact.valid_from, end)


def valid_during(fact: Fact, valid: ValidInterval | None, as_of: datetime | None = None) -> bool:
    """Whether ``fact`` held at some instant of ``valid`` (None: no valid-time filter), as
    known at ``as_of``.

    An empty ``valid`` (``[t, t)``) holds no instant, so no fact passes it.
    """
    return valid is None or valid_interval(fact, as_of).overlaps(valid)


def order_key(fact_id: str) -> str:
    """The key facts are listed by: the hex of the id's UTF-8 bytes (byte order of the ids).

    Hex keeps the order the same whether a backend compares bytes or folds case. A page's
    cursor is the key of its last fact (opaque to callers).
    """
    return fact_id.encode().hex()


def check_search_args(top_k: int, min_similarity: float, alpha: float) -> None:
    """Reject search arguments outside their ranges.

    Raises:
        ValueError: ``top_k`` < 1, ``alpha`` outside [0, 1] or ``min_similarity`` above 1.
    """
    if top_k < 1:
        raise ValueError(f"top_k must be at least 1, not {top_k}")
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], not {alpha}")
    if min_similarity > 1.0:
        raise ValueError(f"min_similarity must be at most 1, not {min_similarity}")


def check_list_limit(limit: int) -> None:
    """Reject a page size below 1 (``FactStore.list_facts``).

    Raises:
        ValueError: ``limit`` < 1.
    """
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")


def check_write(namespace: str, facts: Sequence[StoredFact]) -> None:
    """What every ``FactStore.upsert`` checks before writing anything.

    Raises:
        ValueError: a fact belongs to another namespace (``check_namespace``).
        StoreWriteFailed: vectors of mixed lengths (``odd_dimensions``); nothing was written.
    """
    check_namespace(namespace, facts)
    if odd := odd_dimensions(facts):
        raise StoreWriteFailed(namespace, odd)


def check_namespace(namespace: str, facts: Sequence[StoredFact]) -> None:
    """Reject facts that belong to another namespace than the one written.

    Raises:
        ValueError: a fact's ``namespace`` is not ``namespace``.
    """
    for item in facts:
        if item.fact.namespace != namespace:
            raise ValueError(
                f"fact {item.fact.fact_id} belongs to namespace {item.fact.namespace}, "
                f"not {namespace}"
            )


def odd_dimensions(facts: Sequence[StoredFact]) -> dict[str, str]:
    """The facts whose vector length differs from the most common one in ``facts``, with why.

    A write checks this before sending: a new Weaviate tenant takes its dimension from
    whichever vector of a mixed batch it indexes first, and may keep the others half-written.
    """
    lengths = Counter(len(item.vector) for item in facts)
    if len(lengths) <= 1:
        return {}
    usual = lengths.most_common(1)[0][0]
    return {
        item.fact.fact_id: f"vector of {len(item.vector)} dimensions, the others have {usual}"
        for item in facts
        if len(item.vector) != usual
    }
