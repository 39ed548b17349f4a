"""Which runtime computes the embeddings (FACTSTREAM_EMBED_RUNTIME), and on which device.

``auto`` (the default): torch (sentence-transformers, the reference) on a CUDA device when
torch sees one; on the CPU, ONNX Runtime for a model it can compute (mean pooling, like the
default all-MiniLM-L6-v2), else torch. On 2 shared cores ONNX Runtime embedded one question
in less than half torch's time and batches in about the same (docs/benchmarks.md).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Literal

from factstream.config import EmbedSettings
from factstream.embed.base import Embedder
from factstream.embed.child import resolve_device, resolve_model
from factstream.embed.onnx_embedder import OnnxEmbedder, onnx_unsupported
from factstream.embed.st_embedder import SentenceTransformerEmbedder
from factstream.errors import EmbedError
from factstream.metrics import EmbedMetrics

__all__ = ["choose_runtime", "load_embedder"]

Runtime = Literal["onnx", "torch"]

log = logging.getLogger(__name__)


def choose_runtime(settings: EmbedSettings) -> tuple[Runtime, str]:
    """The runtime and the device ``settings`` ask for, ``auto`` resolved.

    Raises:
        EmbedError: onnx asked for on a device other than the CPU; int8 weights
            (FACTSTREAM_EMBED_QUANTIZE) asked for with torch.
    """
    device = resolve_device(settings.device)
    if settings.quantize != "none":
        if settings.runtime == "torch":
            raise EmbedError(
                f"FACTSTREAM_EMBED_QUANTIZE={settings.quantize} needs the onnx embedding "
                "runtime (FACTSTREAM_EMBED_RUNTIME=onnx or auto), not torch"
            )
        return "onnx", "cpu"  # OnnxEmbedder.load says why when the model is not one it runs
    if settings.runtime == "torch":
        return "torch", device
    if settings.runtime == "onnx":
        if device != "cpu" and settings.device != "auto":
            raise EmbedError(
                f"the onnx embedding runtime runs on the CPU only, not {settings.device!r} "
                "(FACTSTREAM_EMBED_RUNTIME=torch or auto runs there)"
            )
        return "onnx", "cpu"
    if device != "cpu" or onnx_unsupported(Path(resolve_model(settings.model))) is not None:
        return "torch", device
    return "onnx", "cpu"


async def load_embedder(
    settings: EmbedSettings, cache_dir: Path, metrics: EmbedMetrics | None = None
) -> Embedder:
    """The embedder ``settings`` ask for, loaded.

    Args:
        settings: The embedding section (model, runtime, device, threads, batch size).
        cache_dir: The cache folder (FACTSTREAM_CACHE_DIR): where the ONNX export is kept.
        metrics: Where to count texts and batch latency.

    Raises:
        EmbedError: The model cannot be loaded by the runtime chosen.
    """
    runtime, device = choose_runtime(settings)
    log.info("embeddings: %s with %s on %s", settings.model, runtime, device)
    resolved = settings.model_copy(update={"device": device})
    if runtime == "onnx":
        return await OnnxEmbedder.load(resolved, cache_dir, metrics)
    return await SentenceTransformerEmbedder.load(resolved, metrics)
