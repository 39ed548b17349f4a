"""CachedEmbedder: repeated questions and texts never reach the model twice."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from factstream.embed.base import Vector
from factstream.embed.cache import CachedEmbedder, question_key
from factstream.embed.fake import HashingEmbedder


class _Recording(HashingEmbedder):
    """Remembers every text it embedded; ``gate`` holds batch calls until set."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.questions: list[str] = []
        self.gate: asyncio.Event | None = None
        self.fail: BaseException | None = None

    async def embed(self, text: str) -> Vector:
        self.questions.append(text)
        return await super().embed(text)

    async def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        self.texts += texts
        if self.gate is not None:
            await self.gate.wait()
        if self.fail is not None:
            raise self.fail
        return await super().embed_batch(texts)


def _cached(inner: _Recording, questions: int = 8, texts: int = 8) -> CachedEmbedder:
    return CachedEmbedder(inner, questions=questions, texts=texts)


async def test_a_repeated_question_is_embedded_once() -> None:
    inner = _Recording()
    cached = _cached(inner)
    first = await cached.embed("Who leads  the party?")
    again = await cached.embed(" Who leads the party? ")
    assert again == first == inner.vector("Who leads the party?")
    assert inner.questions == ["Who leads  the party?"]
    assert (cached.hits, cached.misses) == (1, 1)
    assert question_key("a \n b") == "a b"


async def test_texts_reach_the_model_once_across_calls_and_within_one() -> None:
    inner = _Recording()
    cached = _cached(inner)
    first = await cached.embed_batch(["a b", "c d", "a b"])
    second = await cached.embed_batch(["c d", "e f"])
    assert inner.texts == ["a b", "c d", "e f"]
    assert first == [inner.vector("a b"), inner.vector("c d"), inner.vector("a b")]
    assert second == [inner.vector("c d"), inner.vector("e f")]


async def test_handed_out_vectors_are_not_shared() -> None:
    inner = _Recording()
    cached = _cached(inner)
    (vector,) = await cached.embed_batch(["a b"])
    vector[0] = 99.0
    assert (await cached.embed_batch(["a b"]))[0] == inner.vector("a b")


async def test_a_text_computing_is_waited_for_not_embedded_again() -> None:
    inner = _Recording()
    inner.gate = asyncio.Event()
    cached = _cached(inner)
    first = asyncio.create_task(cached.embed_batch(["a b"]))
    await asyncio.sleep(0)
    second = asyncio.create_task(cached.embed_batch(["a b", "x"]))
    await asyncio.sleep(0)
    inner.gate.set()
    assert (await first)[0] == (await second)[0] == inner.vector("a b")
    assert inner.texts == ["a b", "x"]


async def test_a_waiter_asks_again_when_the_first_call_is_cancelled() -> None:
    inner = _Recording()
    inner.gate = asyncio.Event()
    cached = _cached(inner)
    first = asyncio.create_task(cached.embed_batch(["a b"]))
    await asyncio.sleep(0)
    second = asyncio.create_task(cached.embed_batch(["a b"]))
    await asyncio.sleep(0)
    first.cancel()
    await asyncio.sleep(0)
    inner.gate.set()
    assert await second == [inner.vector("a b")]
    with pytest.raises(asyncio.CancelledError):
        await first


async def test_a_failed_call_caches_nothing_and_its_error_reaches_the_caller() -> None:
    inner = _Recording()
    inner.fail = RuntimeError("model gone")
    cached = _cached(inner)
    with pytest.raises(RuntimeError, match="model gone"):
        await cached.embed_batch(["a b"])
    inner.fail = None
    assert await cached.embed_batch(["a b"]) == [inner.vector("a b")]
    assert inner.texts == ["a b", "a b"]


async def test_the_least_recently_used_text_goes_first() -> None:
    inner = _Recording()
    cached = _cached(inner, texts=2)
    await cached.embed_batch(["a"])
    await cached.embed_batch(["b"])
    await cached.embed_batch(["a"])  # used: "b" is now the oldest
    await cached.embed_batch(["c"])
    await cached.embed_batch(["a", "b"])
    assert inner.texts == ["a", "b", "c", "b"]


async def test_size_zero_caches_nothing() -> None:
    inner = _Recording()
    cached = _cached(inner, questions=0, texts=0)
    await cached.embed("q")
    await cached.embed("q")
    await cached.embed_batch(["a"])
    await cached.embed_batch(["a"])
    assert (inner.questions, inner.texts) == (["q", "q"], ["a", "a"])


def test_other_attributes_are_the_inner_embedders() -> None:
    inner = _Recording()
    cached = _cached(inner)
    assert (cached.name, cached.dim, cached.calls) == (inner.name, inner.dim, 0)
