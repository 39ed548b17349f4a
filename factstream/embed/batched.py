"""BatchedEmbedder: what the real embedders share beside their model.

A model call computes a merged batch (embed/coalesce.py) and reports how long the model took;
this class counts the texts and that time in the metrics and hands each caller its vectors.
A runtime subclass says how to compute a batch (``_compute``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from factstream.embed.base import Vector
from factstream.embed.coalesce import Coalescer
from factstream.metrics import EmbedMetrics

if TYPE_CHECKING:
    import numpy as np

__all__ = ["BatchedEmbedder"]


class BatchedEmbedder:
    """An Embedder whose calls are merged into batches of at most ``max_texts``."""

    def __init__(
        self,
        name: str,
        dim: int,
        metrics: EmbedMetrics | None,
        max_texts: int,
        in_flight: int = 1,
    ) -> None:
        self._name = name
        self._dim = dim
        self._metrics = metrics
        self._coalescer = Coalescer(self._encode_call, max_texts=max_texts, in_flight=in_flight)

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return self._dim

    async def embed(self, text: str) -> Vector:
        return (await self.embed_batch([text]))[0]

    async def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        return await self._coalescer.submit(list(texts))

    async def _compute(self, texts: list[str]) -> tuple[np.ndarray[Any, Any], float]:
        """Normalised vectors of ``texts`` (one row each) and the seconds the model took."""
        raise NotImplementedError

    async def _encode_call(self, texts: list[str]) -> list[Vector]:
        array, seconds = await self._compute(texts)
        return self._counted(array, seconds)

    def _counted(self, array: np.ndarray[Any, Any], seconds: float) -> list[Vector]:
        """The rows of ``array`` as vectors, counted in the metrics with the model's time."""
        if self._metrics is not None:
            self._metrics.texts.labels(self.name).inc(len(array))
            self._metrics.latency.labels(self.name).observe(seconds)
        vectors: list[Vector] = array.tolist()
        return vectors

    async def aclose(self) -> None:
        await self._coalescer.aclose()
