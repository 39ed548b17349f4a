"""The editor's retrieval sends its searches at once (issue 18: the commit's re-check)."""

from __future__ import annotations

import asyncio
from typing import Any

from unit.store.builders import make_fact

from factstream.config import EditorSettings
from factstream.edit.retrieval import Retrieval, Where, editor_candidates
from factstream.embed.fake import HashingEmbedder
from factstream.store.base import SearchHit, StoredFact
from factstream.store.memory import InMemoryFactStore
from factstream.topics.records import Fact

NS = "retrieval"
FACTS = [
    make_fact(
        "f1", "The council of the association met on Monday.", namespace=NS, subject="Council"
    ),
    make_fact("f2", "Mark Emmert chairs the NCAA.", namespace=NS, subject="Mark Emmert"),
    make_fact("f3", "Oslo is a city.", namespace=NS, subject="Oslo"),
]
DOC = "Emmert stepped down; the council of the association met on Monday and chose again."


class Overlapping(InMemoryFactStore):
    """Counts the searches in flight at once; each takes a moment."""

    def __init__(self) -> None:
        super().__init__()
        self.in_flight = self.most = self.searches = 0

    async def search(self, *args: Any, **kwargs: Any) -> list[SearchHit]:
        self.in_flight += 1
        self.searches += 1
        self.most = max(self.most, self.in_flight)
        try:
            await asyncio.sleep(0.01)
            return await super().search(*args, **kwargs)
        finally:
            self.in_flight -= 1


async def _fill(store: InMemoryFactStore, embedder: HashingEmbedder, facts: list[Fact]) -> None:
    vectors = await embedder.embed_batch([f.text for f in facts])
    await store.upsert(NS, [StoredFact(f, v) for f, v in zip(facts, vectors, strict=True)])


async def test_the_queries_of_a_document_are_searched_at_once_with_the_same_candidates() -> None:
    embedder = HashingEmbedder()
    overlapping, plain = Overlapping(), InMemoryFactStore()
    for store in (overlapping, plain):
        await _fill(store, embedder, FACTS)
    how = Retrieval.from_settings(EditorSettings(top_k=3, min_similarity=-1.0))
    how = how.but("with the names query", names_query=True)
    where = Where(NS, None)
    title = "Council chooses again"  # a query of its own; the names make a third (BM25)
    hits = await editor_candidates(overlapping, embedder, where, DOC, how, title=title)
    assert overlapping.searches == 3
    assert overlapping.most == 3  # one at a time, it was 1
    expected = await editor_candidates(plain, embedder, where, DOC, how, title=title)
    assert [(h.fact.fact_id, h.score) for h in hits] == [
        (h.fact.fact_id, h.score) for h in expected
    ]
