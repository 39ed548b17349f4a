"""A store that readies a namespace (``Preparing``: Weaviate activating an inactive tenant)
does so while the question is embedded, not after it."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from factstream.ask.query import AskRequest, search_facts
from factstream.embed.base import Vector
from factstream.embed.fake import HashingEmbedder
from factstream.errors import StoreUnavailable
from factstream.store.base import Preparing
from factstream.store.memory import InMemoryFactStore
from factstream.temporal.intervals import ValidInterval

NOW = datetime(2025, 6, 1, tzinfo=UTC)


class _PreparingStore(InMemoryFactStore):
    """Records the namespaces prepared; ``started`` is set once one is prepared."""

    def __init__(self, fail: bool = False) -> None:
        super().__init__()
        self.prepared: list[tuple[str, ValidInterval | None]] = []
        self.started = asyncio.Event()
        self.fail = fail

    async def prepare_read(self, namespace: str, *, valid: ValidInterval | None) -> None:
        self.prepared.append((namespace, valid))
        await asyncio.sleep(0)
        if self.fail:  # before the embedder may go on: it is still waiting
            raise StoreUnavailable("http://store", "prepare")
        self.started.set()


class _WaitingEmbedder(HashingEmbedder):
    """Embeds only once the store has prepared: done one after the other, it times out."""

    def __init__(self, store: _PreparingStore) -> None:
        super().__init__()
        self.store = store
        self.cancelled = False

    async def embed(self, text: str) -> Vector:
        try:
            await asyncio.wait_for(self.store.started.wait(), timeout=2)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return await super().embed(text)

    async def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        return [await self.embed(text) for text in texts]


async def test_the_namespace_is_prepared_while_the_question_is_embedded() -> None:
    store = _PreparingStore()
    assert isinstance(store, Preparing)
    timings: dict[str, float] = {}
    request = AskRequest("What is Mike Lawler's position in 2022?", "desk")
    await search_facts(
        store,
        _WaitingEmbedder(store),
        request,
        top_k=5,
        min_similarity=-1.0,
        alpha=0.5,
        now=NOW,
        timings=timings,
    )
    ((namespace, valid),) = store.prepared
    assert namespace == "desk"
    assert valid is not None and valid.start.year == 2022  # the question's valid time
    assert {"prepare", "embed", "retrieve"} <= set(timings)


async def test_a_failed_preparation_raises_and_stops_the_embedding() -> None:
    store = _PreparingStore(fail=True)
    embedder = _WaitingEmbedder(store)
    with pytest.raises(StoreUnavailable):
        await search_facts(
            store,
            embedder,
            AskRequest("Who is the mayor?", "desk"),
            top_k=5,
            min_similarity=-1.0,
            alpha=0.5,
            now=NOW,
        )
    await asyncio.sleep(0.05)  # the cancellation reaches the waiting embedder
    assert embedder.cancelled
