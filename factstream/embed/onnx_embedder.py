"""OnnxEmbedder: the same model on ONNX Runtime, in the caller's process, on one thread of its own.

The transformer runs as the ONNX graph embed/onnx_export.py exported from the model files;
tokenising (the model's own fast tokenizer, ``tokenizers``), mean pooling and normalising
are done here the way sentence-transformers does them (texts truncated at the model's
max_seq_length, the mean over the attention mask, L2 normalised), so the vectors
equal the torch reference's (within 1e-4 cosine; tests/integration/test_onnx_embedder.py).
With FACTSTREAM_EMBED_QUANTIZE=int8 the graph is the export's int8 form
(embed/onnx_quantize.py), whose vectors are not the reference's.

ONNX Runtime and the tokenizer release the GIL while they compute, so the model runs in a
thread of the caller's process, with no trip to another process and back. Requests made
while a call runs are merged into the next (embed/coalesce.py); a merged call is cut into
groups of like token lengths. A question (``embed``) runs in a second thread, beside
whatever batch is running.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factstream.config import EmbedSettings
from factstream.embed.base import Vector
from factstream.embed.batched import BatchedEmbedder
from factstream.embed.child import length_groups, resolve_model
from factstream.embed.onnx_export import INPUTS, OUTPUT, ensure_onnx, onnx_dir
from factstream.embed.onnx_quantize import ensure_int8
from factstream.errors import EmbedError
from factstream.metrics import EmbedMetrics

if TYPE_CHECKING:
    import numpy as np
    import onnxruntime as ort
    from tokenizers import Tokenizer

__all__ = ["OnnxEmbedder", "onnx_unsupported"]

# A model call's fixed cost in tokens it could have embedded instead (length_groups).
_CALL_COST_TOKENS = 16
_MEAN_ONLY = {
    "pooling_mode_mean_tokens": True,
    "pooling_mode_cls_token": False,
    "pooling_mode_max_tokens": False,
    "pooling_mode_mean_sqrt_len_tokens": False,
}


def _read_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def onnx_unsupported(model_dir: Path) -> str | None:
    """Why the ONNX embedder cannot compute ``model_dir`` like sentence-transformers, or None.

    It does what the default model's modules do: a transformer, mean pooling, normalising.
    """
    if not (model_dir / "modules.json").is_file():
        return f"{model_dir} is not a sentence-transformers folder"
    kinds = [m.get("type", "") for m in json.loads((model_dir / "modules.json").read_text())]
    if [k.rsplit(".", 1)[-1] for k in kinds] != ["Transformer", "Pooling", "Normalize"]:
        return f"its modules are {kinds}, not Transformer, Pooling, Normalize"
    pooling = model_dir / "1_Pooling" / "config.json"
    if not pooling.is_file() or any(
        _read_json(pooling).get(key, False) != value for key, value in _MEAN_ONLY.items()
    ):
        return "its pooling is not the mean of the tokens"
    if not (model_dir / "tokenizer.json").is_file():
        return "it has no fast tokenizer (tokenizer.json)"
    return None


def _tokenizer(model_dir: Path) -> tuple[Tokenizer, int]:
    from tokenizers import Tokenizer  # noqa: PLC0415

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    config = model_dir / "sentence_bert_config.json"
    max_len = int(_read_json(config).get("max_seq_length", 512)) if config.is_file() else 512
    tokenizer.no_padding()  # padded here, per length group
    tokenizer.enable_truncation(max_length=max_len)
    return tokenizer, max_len


def _session(path: Path, threads: int, *, spin: bool) -> ort.InferenceSession:
    import onnxruntime as ort  # noqa: PLC0415

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads  # 0: one per core
    options.inter_op_num_threads = 1
    # A pool thread that sleeps between operators wakes late for the next, one that spins
    # burns the core meanwhile: on 2 shared cores a spinning question session took twice the
    # CPU of a sleeping one and its p95 was the worst (docs/benchmarks.md), so only the
    # question session may spin, and only when FACTSTREAM_EMBED_QUESTION_SPIN says so.
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


class OnnxEmbedder(BatchedEmbedder):
    """An Embedder over the ONNX export of a sentence-transformers model (mean pooling).

    Build it with ``await OnnxEmbedder.load(settings, cache_dir)``: exports the model into
    ``cache_dir`` if it is not there yet, then opens the sessions: one for batches
    (``threads``) and, if its thread count or spinning differs, one for ``embed`` of a single
    text, a question (``question_threads``): a question waits for its vector, a batch fills
    a core.
    """

    def __init__(
        self,
        settings: EmbedSettings,
        sessions: tuple[ort.InferenceSession, ort.InferenceSession],
        tokenizer: Tokenizer,
        metrics: EmbedMetrics | None = None,
    ) -> None:
        session, self._single = sessions
        dim = int(session.get_outputs()[0].shape[-1])
        super().__init__(settings.model, dim, metrics, settings.batch_size)
        self._settings = settings
        self._session = session
        self._tokenizer = tokenizer
        self._inputs = {i.name for i in session.get_inputs()}
        self._pad_id = tokenizer.token_to_id("[PAD]") or 0
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="onnx-embed")
        # A question has a thread of its own: in the worker, a question from
        # factstream.questions would otherwise wait behind a document batch (ONNX Runtime
        # runs sessions from several threads at once).
        self._question_thread = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="onnx-question"
        )
        self._cpu_lock = threading.Lock()
        # CPU seconds of the model's threads (tokenising, the graph, pooling); with more than
        # one intra-op thread, the pool's other threads are not counted.
        self.cpu_seconds = 0.0

    @classmethod
    async def load(
        cls, settings: EmbedSettings, cache_dir: Path, metrics: EmbedMetrics | None = None
    ) -> OnnxEmbedder:
        """Export the model if needed (in a subprocess), open the ONNX Runtime session.

        Args:
            settings: The embedding settings section (model, threads, batch size).
            cache_dir: The cache folder (FACTSTREAM_CACHE_DIR); exports go below ``onnx/``
                unless FACTSTREAM_EMBED_ONNX_DIR names another folder.
            metrics: Where to count texts and batch latency.

        Raises:
            EmbedError: The model is not a local folder ONNX can compute, or cannot be loaded.
        """
        model_dir = Path(resolve_model(settings.model))
        reason = onnx_unsupported(model_dir)
        if reason is not None:
            raise EmbedError(
                f"the onnx embedding runtime cannot run {settings.model!r}: {reason} "
                "(FACTSTREAM_EMBED_RUNTIME=torch can)"
            )
        path = await asyncio.to_thread(ensure_onnx, onnx_dir(settings, cache_dir), model_dir)
        if settings.quantize == "int8":
            path = await asyncio.to_thread(ensure_int8, path)
        try:
            batches = await asyncio.to_thread(_session, path, settings.threads, spin=False)
            single = batches
            if settings.question_threads != settings.threads or settings.question_spin:
                single = await asyncio.to_thread(
                    _session, path, settings.question_threads, spin=settings.question_spin
                )
            tokenizer, _max_len = await asyncio.to_thread(_tokenizer, model_dir)
        except Exception as exc:  # ONNX Runtime and tokenizers raise their own kinds
            raise EmbedError(f"cannot load the ONNX model {path}: {exc}") from exc
        return cls(settings, (batches, single), tokenizer, metrics)

    async def embed(self, text: str) -> Vector:
        """One text, a question: on the one-text session (``question_threads``) in a thread
        of its own, or on the caller's with ``question_inline``; not merged into a batch nor
        queued behind one. Batches (``embed_batch``, a document's or facts' texts) never use
        it: its extra threads are for a question that waits, taken only from idle cores.
        Questions are embedded one at a time either way (one question thread)."""
        if self._settings.question_inline:
            # No thread hop: the loop's thread runs the model (with ONNX Runtime's pool, when
            # the session has one); other work on the loop waits those milliseconds.
            array, seconds = self.encode([text], self._single)
        else:
            array, seconds = await asyncio.get_running_loop().run_in_executor(
                self._question_thread, self.encode, [text], self._single
            )
        return self._counted(array, seconds)[0]

    async def _compute(self, texts: list[str]) -> tuple[np.ndarray[Any, Any], float]:
        return await asyncio.get_running_loop().run_in_executor(self._thread, self.encode, texts)

    def encode(
        self, texts: list[str], session: ort.InferenceSession | None = None
    ) -> tuple[np.ndarray[Any, Any], float]:
        """Normalised float32 vectors of ``texts`` in order, and the seconds it took
        (synchronous: the async methods run it on the embedder's thread); on the batch
        session unless another is given."""
        import numpy as np  # noqa: PLC0415

        started, cpu = time.perf_counter(), time.thread_time()
        encodings = self._tokenizer.encode_batch(texts)
        lengths = [len(e.ids) for e in encodings]
        out = np.empty((len(texts), self._dim), dtype=np.float32)
        batch_size = self._settings.batch_size
        session = session or self._session
        for group in length_groups(lengths, batch_size, call_cost=_CALL_COST_TOKENS):
            width = max(lengths[i] for i in group)
            ids = np.full((len(group), width), self._pad_id, dtype=np.int64)
            mask = np.zeros((len(group), width), dtype=np.int64)
            for row, i in enumerate(group):
                ids[row, : lengths[i]] = encodings[i].ids
                mask[row, : lengths[i]] = 1
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = session.run([OUTPUT], {k: feeds[k] for k in INPUTS if k in self._inputs})
            out[group] = _mean_normalised(hidden[0], mask)
        with self._cpu_lock:
            self.cpu_seconds += time.thread_time() - cpu
        return out, time.perf_counter() - started

    async def aclose(self) -> None:
        await super().aclose()
        for pool in (self._thread, self._question_thread):
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)


def _mean_normalised(hidden: np.ndarray[Any, Any], mask: np.ndarray[Any, Any]) -> Any:
    """sentence-transformers' mean pooling then Normalize, in numpy (float32)."""
    import numpy as np  # noqa: PLC0415

    weights = mask[..., None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    mean = summed / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(mean, axis=1, keepdims=True)
    return mean / np.clip(norms, 1e-12, None)
