"""The ingest rate apart from the worker's start, and against the embedding bound."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from factstream.embed.base import Vector
from factstream_lab.eval.locomo import kb_facts
from factstream_lab.eval.locomo.kb_facts import IngestRate


class _Slow:
    """Embeds in 0.05 s a text (an embedder's shape, no model)."""

    name = "slow"
    dim = 1

    async def embed(self, text: str) -> Vector:
        return (await self.embed_batch([text]))[0]

    async def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        await asyncio.sleep(0.05 * len(texts))
        return [[1.0] for _ in texts]

    async def aclose(self) -> None:
        return None


def test_steady_rate_leaves_out_the_first_document(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([100.0, 110.0, 112.0])  # first applied at 100 s, then 3 more by 112 s
    monkeypatch.setattr(kb_facts.time, "monotonic", lambda: next(clock))
    ticks: list[int] = []
    rate = IngestRate()
    tick = rate.ticker(ticks.append)
    tick(1)
    tick(2)
    tick(1)
    summary = rate.summary()
    assert ticks == [1, 2, 1]
    assert summary["steady_documents"] == 3
    assert summary["steady_seconds"] == 12.0
    assert summary["steady_documents_per_second"] == 0.25
    assert summary["embed_bound_documents_per_second"] is None


def test_first_tick_of_several_counts_all_but_one() -> None:
    rate = IngestRate()
    rate.ticker(lambda n: None)(5)
    assert rate.after_first == 4
    assert rate.summary()["steady_documents_per_second"] is None  # no time elapsed


def test_bound_is_texts_over_embedding_seconds() -> None:
    rate = IngestRate(first=0.0, last=4.0, after_first=8)
    asyncio.run(rate.bound(_Slow(), ["a"] * 10))
    summary = rate.summary()
    bound = summary["embed_bound_documents_per_second"]
    assert bound is not None and 10 < bound <= 20  # 10 texts in at least 0.5 s
    assert summary["steady_over_embed_bound"] == pytest.approx(2.0 / bound, abs=0.01)
