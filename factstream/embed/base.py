"""The Embedder interface: texts in, unit-length vectors out, without blocking the event loop."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

__all__ = ["Embedder", "Vector"]

Vector = list[float]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into normalised vectors (cosine similarity = dot product)."""

    @property
    def name(self) -> str:
        """Model name, for metrics and stored vectors."""
        ...

    @property
    def dim(self) -> int:
        """Vector dimension."""
        ...

    async def embed(self, text: str) -> Vector:
        """One text's vector."""
        ...

    async def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        """Vectors for ``texts``, in order."""
        ...

    async def aclose(self) -> None:
        """Release the model and its threads."""
        ...
