"""The embedding model's ONNX export, made while the services are provisioned.

On a first run the worker's embedder exports the model to ONNX before its first document
(``ensure_onnx``: torch imported in a subprocess, about 24 CPU seconds), so the export used
to sit inside the demo's editing time, with the LM server idle. Started beside the builds
instead it only takes its share of their CPU. The worker then finds the export cached. A
failure here is left to the worker, which raises it with its message.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from factstream.config import Settings
from factstream.embed.child import resolve_model
from factstream.embed.factory import choose_runtime
from factstream.embed.onnx_export import cached_onnx_path, ensure_onnx, onnx_dir
from factstream.errors import FactstreamError
from factstream_lab.stack.progress import Outcome, Progress

__all__ = ["EMBED_STEP", "start_onnx_export"]

log = logging.getLogger(__name__)

EMBED_STEP = ("embed", "export the embedding model to ONNX")


def _export(settings: Settings, progress: Progress) -> Path | None:
    service, title = EMBED_STEP
    try:
        runtime, _device = choose_runtime(settings.embed)
    except FactstreamError as exc:
        log.warning("embedding runtime not resolved before the demo: %s", exc)
        return None
    if runtime != "onnx":
        return None
    model_dir = Path(resolve_model(settings.embed.model))
    exports = onnx_dir(settings.embed, settings.local.cache_dir)
    target = cached_onnx_path(exports, model_dir)
    if target.is_file():
        progress.report(service, title, Outcome.CACHED, str(target))
        return target
    with progress.step(service, title, f"torch.onnx export of {model_dir.name}") as step:
        path = ensure_onnx(exports, model_dir)
        step.ends(Outcome.BUILT, str(path))
    return path


def _logged(future: Future[Path | None]) -> None:
    error = future.exception()
    if error is not None:
        log.warning("ONNX export before the demo failed (the worker retries it): %s", error)


def start_onnx_export(
    settings: Settings, progress: Progress, pool: ThreadPoolExecutor
) -> Future[Path | None]:
    """Export the model in ``pool`` if the worker's embedder will need an export it lacks.

    The future's result is the export's path, or None when the runtime is not onnx or the
    runtime could not be resolved; an export that failed is logged, never raised here.
    """
    future = pool.submit(_export, settings, progress)
    future.add_done_callback(_logged)
    return future
