"""The fact store the editor and the query agent see: a Protocol, whatever holds the facts.

Weaviate is the real one (``weaviate_store.py``); ``memory.py`` is a unit-test double and
never a runtime fallback. The store is a projection of the changelog: it is written by the
materializer only, and can be dropped and rebuilt from ``factstream.fact-edits``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from factstream.temporal.intervals import ValidInterval
from factstream.topics.records import Fact

__all__ = [
    "AppliedBatch",
    "Deactivating",
    "Expecting",
    "FactCounts",
    "FactPage",
    "FactStore",
    "SearchHit",
    "StoredFact",
    "TenantSweep",
    "WordCounting",
]


@dataclass(frozen=True)
class StoredFact:
    """A fact with the vector it is searched by (the embedding of its text)."""

    fact: Fact
    vector: Sequence[float]


@dataclass(frozen=True)
class SearchHit:
    """One retrieved fact.

    Attributes:
        fact: the fact as stored.
        similarity: cosine similarity of the fact's vector to the query vector, in [-1, 1];
            the similarity floor applies to this.
        score: the store's fused hybrid score (dense + BM25), used for ranking only.
    """

    fact: Fact
    similarity: float
    score: float


@dataclass(frozen=True)
class FactPage:
    """One page of a listing; ``cursor`` continues it (None at the end)."""

    facts: list[Fact]
    cursor: str | None


@dataclass(frozen=True)
class FactCounts:
    """How many facts of a namespace are true and false now (by their latest history entry)."""

    true: int
    false: int


@dataclass(frozen=True)
class AppliedBatch:
    """The record that a document's edit batch was applied (the first one wins)."""

    document_id: str
    batch_id: str
    size: int


@dataclass(frozen=True)
class TenantSweep:
    """One sweep of idle tenants: how many of the namespaces swept stay active (used
    lately), and those made inactive now."""

    active: int
    deactivated: list[str]


@runtime_checkable
class Deactivating(Protocol):
    """A store whose idle namespaces can be made inactive (and come back at their next use)."""

    async def deactivate_idle(
        self, owns: Callable[[str], bool], *, listing: bool = True
    ) -> TenantSweep: ...


@runtime_checkable
class Preparing(Protocol):
    """A store that readies a namespace for a search while the caller does other work (embeds
    the question): its once-per-process checks and, if it may be inactive, its activation."""

    async def prepare_read(self, namespace: str, *, valid: ValidInterval | None) -> None: ...


@runtime_checkable
class WordCounting(Protocol):
    """A store that tells which words say little about which fact: those more than half of
    a namespace's facts contain, as its keyword search matches them (a word in n of N
    facts has a Robertson-Sparck Jones weight log((N - n + 0.5) / (n + 0.5)) below zero
    once n > N / 2). ``ask.common_words`` leaves them out of a question's search."""

    async def common_words(
        self, namespace: str, words: Sequence[str], *, as_of: datetime | None
    ) -> frozenset[str]: ...


@runtime_checkable
class Expecting(Protocol):
    """A store told of a namespace about to be written, so that it readies new namespaces
    together (their tenants created many to a request) before their documents' turn."""

    def expect(self, namespace: str) -> None: ...


class FactStore(Protocol):
    """Facts per namespace (one isolated partition each, created on first use)."""

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
        """Hybrid search (``alpha`` 1 = dense only, 0 = BM25 only) over facts true at ``as_of``.

        ``as_of`` None means true now (what the knowledge base believes, bitemporally: at
        which time). ``valid`` keeps the facts whose valid interval overlaps it (what held in
        the world then; ``rules.valid_during``), None filters nothing. ``entities`` keeps
        the facts indexed under one of these entity keys (``store.entities``; None: any,
        empty: none). Only hits with
        ``similarity >= min_similarity`` are returned, best ``score`` first, at most
        ``top_k``. An unknown namespace has no facts.
        """
        ...

    async def get(self, namespace: str, fact_ids: Sequence[str]) -> dict[str, Fact]:
        """The facts among ``fact_ids`` that exist, by id."""
        ...

    async def get_stored(self, namespace: str, fact_ids: Sequence[str]) -> dict[str, StoredFact]:
        """The facts among ``fact_ids`` that exist, by id, with their stored vectors (the
        materializer keeps the vector of a fact whose text an edit did not change)."""
        ...

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
        """All facts of a namespace in a stable order, page by page; ``valid`` as in search."""
        ...

    async def upsert(self, namespace: str, facts: Sequence[StoredFact]) -> None:
        """Write facts (insert or replace by fact id) in batches; raise if any object fails."""
        ...

    async def count_facts(self, namespace: str) -> FactCounts:
        """The namespace's facts true and false now; an unknown namespace has none."""
        ...

    async def applied_batch(self, namespace: str, document_id: str) -> AppliedBatch | None:
        """The batch already applied for ``document_id``, if any."""
        ...

    async def record_batch(self, namespace: str, batch: AppliedBatch) -> None:
        """Remember that ``batch`` was applied (written after its facts)."""
        ...

    async def drop_namespace(self, namespace: str) -> None:
        """Delete every fact and batch record of a namespace (for a rebuild)."""
        ...

    async def has_namespace(self, namespace: str) -> bool:
        """Whether the namespace exists (has been written), without listing the others."""
        ...

    async def namespaces(self) -> list[str]:
        """The namespaces that have a partition."""
        ...

    async def close(self) -> None:
        """Release connections."""
        ...
