"""The hashing test double honours the Embedder contract: deterministic, unit-length, batched."""

from __future__ import annotations

import math

from factstream.embed.base import Embedder
from factstream.embed.fake import HashingEmbedder


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_contract() -> None:
    emb = HashingEmbedder(dim=32)
    assert isinstance(emb, Embedder)
    texts = ["The Queen will speak.", "the queen WILL speak", "Rockets launch.", ""]
    batch = await emb.embed_batch(texts)
    assert len(batch) == 4 and all(len(v) == emb.dim == 32 for v in batch)
    assert all(math.isclose(math.sqrt(_dot(v, v)), 1.0) for v in batch)
    assert batch[0] == batch[1] == await emb.embed(texts[0])  # case and punctuation ignored
    assert _dot(batch[0], batch[0]) > _dot(batch[0], batch[2])
    assert await HashingEmbedder(dim=32).embed("x") == await emb.embed("x")
    assert await emb.embed_batch([]) == []
    await emb.aclose()
