"""HashingEmbedder: a deterministic bag-of-words embedder for unit tests only.

Texts that share words get similar vectors, identical texts identical ones. It knows no
meaning; nothing at run time falls back to it.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence

from factstream.embed.base import Vector

__all__ = ["HashingEmbedder"]

_WORD = re.compile(r"\w+")


class HashingEmbedder:
    """Each lower-cased word adds +-1 to one of ``dim`` buckets (by its hash); then normalise."""

    def __init__(self, dim: int = 64) -> None:
        self._dim = dim
        self.calls = 0

    @property
    def name(self) -> str:
        return f"hashing-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def vector(self, text: str) -> Vector:
        """The vector of ``text`` (synchronous; the async methods wrap it)."""
        vec = [0.0] * self._dim
        for word in _WORD.findall(text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "big") % self._dim
            vec[bucket] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in vec))
        if norm == 0.0:
            vec[0] = 1.0  # empty text: a fixed unit vector, never a zero vector
            return vec
        return [v / norm for v in vec]

    async def embed(self, text: str) -> Vector:
        self.calls += 1
        return self.vector(text)

    async def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        self.calls += 1
        return [self.vector(t) for t in texts]

    async def aclose(self) -> None:
        return None
