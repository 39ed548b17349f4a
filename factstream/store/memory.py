"""InMemoryFactStore: the FactStore held in dicts, a unit-test double only."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from factstream.errors import StoreWriteFailed
from factstream.store.base import AppliedBatch, FactCounts, FactPage, SearchHit, StoredFact
from factstream.store.entities import is_about
from factstream.store.rules import (
    check_list_limit,
    check_search_args,
    check_write,
    order_key,
    similarity,
    valid_during,
    visible,
)
from factstream.temporal.intervals import ValidInterval
from factstream.topics.records import Fact

__all__ = ["InMemoryFactStore"]

_WORD = re.compile(r"\w+")


class InMemoryFactStore:
    """The FactStore contract in process memory, for unit tests.

    Never a runtime fallback: nothing builds it from settings, and a Weaviate outage stops
    progress instead (docs/design.md section 5). The contract tests run over it and over
    ``WeaviateFactStore`` alike. Where it approximates: BM25 is term overlap (the share of
    query words in the fact), and the hybrid score is
    ``alpha * (cosine + 1) / 2 + (1 - alpha) * overlap``; at ``alpha`` 0 only facts sharing a
    word with the query are candidates, as with BM25. Similarity is the exact cosine, and a
    namespace's vector dimension is fixed by its first fact, as in a Weaviate tenant.
    """

    def __init__(self) -> None:
        """An empty store."""
        self._facts: dict[str, dict[str, StoredFact]] = {}
        self._batches: dict[str, dict[str, AppliedBatch]] = {}

    async def search(
        self,
        namespace: str,
        query: str,
        vector: Sequence[float],
        *,
        as_of: datetime | None,
        top_k: int,
        min_similarity: float,
        alpha: float,
        valid: ValidInterval | None = None,
        entities: Sequence[str] | None = None,
    ) -> list[SearchHit]:
        """Hybrid search over the facts true at ``as_of``; see ``FactStore.search``."""
        check_search_args(top_k, min_similarity, alpha)
        words = set(_WORD.findall(query.lower()))
        hits = []
        for stored in self._facts.get(namespace, {}).values():
            if not (visible(stored.fact, as_of) and valid_during(stored.fact, valid, as_of)):
                continue
            if entities is not None and not is_about(stored.fact, entities):
                continue
            cos = similarity(vector, stored.vector)
            overlap = _overlap(words, stored.fact.text)
            if cos >= min_similarity and (alpha > 0 or overlap > 0):
                score = alpha * (cos + 1) / 2 + (1 - alpha) * overlap
                hits.append(SearchHit(stored.fact, cos, score))
        hits.sort(key=lambda hit: (-hit.score, order_key(hit.fact.fact_id)))
        return hits[:top_k]

    async def common_words(
        self, namespace: str, words: Sequence[str], *, as_of: datetime | None
    ) -> frozenset[str]:
        """The ``words`` (lower case) in more than half of the facts true at ``as_of``;
        see ``WordCounting``."""
        texts = [
            set(_WORD.findall(stored.fact.text.lower()))
            for stored in self._facts.get(namespace, {}).values()
            if visible(stored.fact, as_of)
        ]
        return frozenset(
            w for w in {w.lower() for w in words} if 2 * sum(w in t for t in texts) > len(texts)
        )

    async def get(self, namespace: str, fact_ids: Sequence[str]) -> dict[str, Fact]:
        """The facts among ``fact_ids`` that exist, by id."""
        found = await self.get_stored(namespace, fact_ids)
        return {fact_id: stored.fact for fact_id, stored in found.items()}

    async def get_stored(self, namespace: str, fact_ids: Sequence[str]) -> dict[str, StoredFact]:
        """The facts among ``fact_ids`` that exist, by id, with their vectors."""
        stored = self._facts.get(namespace, {})
        return {fact_id: stored[fact_id] for fact_id in fact_ids if fact_id in stored}

    async def list_facts(
        self,
        namespace: str,
        *,
        as_of: datetime | None = None,
        include_false: bool = False,
        limit: int = 100,
        cursor: str | None = None,
        valid: ValidInterval | None = None,
    ) -> FactPage:
        """Facts in byte order of their ids, ``limit`` a page; see ``rules.visible``."""
        check_list_limit(limit)
        facts = sorted(
            (
                stored.fact
                for stored in self._facts.get(namespace, {}).values()
                if visible(stored.fact, as_of, include_false=include_false)
                and valid_during(stored.fact, valid, as_of)
                and (cursor is None or order_key(stored.fact.fact_id) > cursor)
            ),
            key=lambda fact: order_key(fact.fact_id),
        )
        page = facts[:limit]
        return FactPage(page, order_key(page[-1].fact_id) if len(facts) > limit else None)

    async def upsert(self, namespace: str, facts: Sequence[StoredFact]) -> None:
        """Insert or replace facts; a vector of the wrong dimension fails its fact.

        Raises:
            StoreWriteFailed: some facts were rejected (they are absent afterwards).
        """
        check_write(namespace, facts)
        if not facts:
            return
        stored = self._tenant(namespace)
        dimension = next((len(s.vector) for s in stored.values()), len(facts[0].vector))
        failures = {}
        for item in facts:
            fact_id = item.fact.fact_id
            if len(item.vector) == dimension:
                stored[fact_id] = StoredFact(item.fact, tuple(item.vector))
                continue
            stored.pop(fact_id, None)
            failures[fact_id] = f"vector of {len(item.vector)} dimensions, not {dimension}"
        if failures:
            raise StoreWriteFailed(namespace, failures)

    async def count_facts(self, namespace: str) -> FactCounts:
        """The namespace's facts true and false now."""
        true = sum(stored.fact.truth for stored in self._facts.get(namespace, {}).values())
        return FactCounts(true, len(self._facts.get(namespace, {})) - true)

    async def applied_batch(self, namespace: str, document_id: str) -> AppliedBatch | None:
        """The batch already applied for ``document_id``, if any."""
        return self._batches.get(namespace, {}).get(document_id)

    async def record_batch(self, namespace: str, batch: AppliedBatch) -> None:
        """Record ``batch`` as applied; an existing record for its document wins."""
        self._tenant(namespace)
        self._batches[namespace].setdefault(batch.document_id, batch)

    async def drop_namespace(self, namespace: str) -> None:
        """Forget every fact and batch record of a namespace."""
        self._facts.pop(namespace, None)
        self._batches.pop(namespace, None)

    async def has_namespace(self, namespace: str) -> bool:
        """Whether the namespace was written to and not dropped."""
        return namespace in self._facts

    async def namespaces(self) -> list[str]:
        """The namespaces written to and not dropped, sorted."""
        return sorted(self._facts)

    async def close(self) -> None:
        """Nothing to release."""

    def _tenant(self, namespace: str) -> dict[str, StoredFact]:
        self._batches.setdefault(namespace, {})
        return self._facts.setdefault(namespace, {})


def _overlap(words: set[str], text: str) -> float:
    if not words:
        return 0.0
    return len(words & set(_WORD.findall(text.lower()))) / len(words)
