"""Which embedding runtime and device the settings pick, and the ONNX export's cache key
(no model is loaded or exported here)."""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from factstream.config import EmbedSettings
from factstream.embed import child, factory, onnx_embedder
from factstream.embed.factory import choose_runtime
from factstream.embed.onnx_embedder import onnx_unsupported
from factstream.embed.onnx_export import cached_onnx_path, model_digest, onnx_dir
from factstream.embed.st_embedder import bundled_model_path
from factstream.errors import EmbedError


def _cls_pooling_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "cls-model"
    shutil.copytree(bundled_model_path(), folder, ignore=shutil.ignore_patterns("*.safetensors"))
    pooling = folder / "1_Pooling" / "config.json"
    config = json.loads(pooling.read_text())
    config.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
    pooling.write_text(json.dumps(config))
    return folder


def test_the_bundled_model_is_one_onnx_computes() -> None:
    assert onnx_unsupported(bundled_model_path()) is None


def test_other_pooling_or_no_folder_is_not(tmp_path: Path) -> None:
    reason = onnx_unsupported(_cls_pooling_copy(tmp_path))
    assert reason is not None and "mean" in reason
    reason = onnx_unsupported(Path("BAAI/bge-small-en-v1.5"))
    assert reason is not None and "not a sentence-transformers folder" in reason


def test_auto_on_a_cpu_runs_onnx_for_mean_pooling_else_torch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(child, "_gpu_device_nodes", lambda: False)
    assert choose_runtime(EmbedSettings()) == ("onnx", "cpu")
    other = EmbedSettings(model=str(_cls_pooling_copy(tmp_path)))
    assert choose_runtime(other) == ("torch", "cpu")
    assert choose_runtime(EmbedSettings(runtime="torch")) == ("torch", "cpu")


def test_auto_on_a_gpu_runs_torch_there(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(factory, "resolve_device", lambda device: "cuda")
    assert choose_runtime(EmbedSettings()) == ("torch", "cuda")
    # onnx asked for by name still runs, on the CPU, when the device was left to auto ...
    assert choose_runtime(EmbedSettings(runtime="onnx")) == ("onnx", "cpu")
    # ... but not on a device named for it.
    with pytest.raises(EmbedError, match="CPU only"):
        choose_runtime(EmbedSettings(runtime="onnx", device="cuda"))


def test_devices_resolve(monkeypatch: pytest.MonkeyPatch) -> None:
    assert child.resolve_device("cuda:1") == "cuda:1"
    assert child.resolve_device("cpu") == "cpu"
    monkeypatch.setattr(child, "_gpu_device_nodes", lambda: False)
    assert child.resolve_device("auto") == "cpu"


def test_the_export_is_keyed_by_the_model_files(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"hidden_size": 384}')
    (folder / "model.safetensors").write_bytes(b"weights")
    first = model_digest(folder)
    exports = onnx_dir(EmbedSettings(), tmp_path / "cache")
    assert exports == tmp_path / "cache" / "onnx"
    assert onnx_dir(EmbedSettings(onnx_dir=tmp_path / "baked"), tmp_path) == tmp_path / "baked"
    assert cached_onnx_path(exports, folder) == exports / first[:16] / "model.onnx"
    (folder / "model.safetensors").write_bytes(b"other weights")
    assert model_digest(folder) != first
    second = model_digest(folder)
    (folder / "README.md").write_text("not part of the graph")
    assert model_digest(folder) == second


class _FakeSession:
    def get_outputs(self) -> list[SimpleNamespace]:
        return [SimpleNamespace(shape=["batch", "seq", 384])]

    def get_inputs(self) -> list[SimpleNamespace]:
        return [SimpleNamespace(name="input_ids"), SimpleNamespace(name="attention_mask")]


@pytest.mark.parametrize(
    ("threads", "question_threads", "spin", "opened"),
    [
        (1, 2, False, [(1, False), (2, False)]),  # the default: the question's sleep too
        (1, 2, True, [(1, False), (2, True)]),
        (1, 1, True, [(1, False), (1, True)]),  # spinning alone earns a session of its own
        (1, 1, False, [(1, False)]),  # questions share the batch session
    ],
)
async def test_the_question_session_spins_only_when_asked(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    threads: int,
    question_threads: int,
    spin: bool,
    opened: list[tuple[int, bool]],
) -> None:
    calls: list[tuple[int, bool]] = []

    def session(_path: Path, n: int, *, spin: bool) -> _FakeSession:
        calls.append((n, spin))
        return _FakeSession()

    monkeypatch.setattr(onnx_embedder, "_session", session)
    monkeypatch.setattr(onnx_embedder, "ensure_onnx", lambda *_: tmp_path / "model.onnx")
    tokenizer = SimpleNamespace(token_to_id=lambda _: 0)
    monkeypatch.setattr(onnx_embedder, "_tokenizer", lambda _: (tokenizer, 256))
    settings = EmbedSettings(
        runtime="onnx", threads=threads, question_threads=question_threads, question_spin=spin
    )
    embedder = await onnx_embedder.OnnxEmbedder.load(settings, tmp_path)
    try:
        assert calls == opened and embedder.dim == 384
    finally:
        await embedder.aclose()


def _fake_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, session: _FakeSession) -> None:
    """The ONNX embedder loads ``session`` and a tokenizer of three tokens a text."""
    monkeypatch.setattr(onnx_embedder, "_session", lambda *_, **__: session)
    monkeypatch.setattr(onnx_embedder, "ensure_onnx", lambda *_: tmp_path / "model.onnx")
    encoding = SimpleNamespace(ids=[101, 2040, 102])
    tokenizer = SimpleNamespace(
        token_to_id=lambda _: 0, encode_batch=lambda texts: [encoding for _ in texts]
    )
    monkeypatch.setattr(onnx_embedder, "_tokenizer", lambda _: (tokenizer, 256))


class _BlockingSession(_FakeSession):
    """A batch (more than one row) blocks until released; one row returns at once."""

    def __init__(self) -> None:
        self.batch_running = threading.Event()
        self.release = threading.Event()

    def run(self, _outputs: list[str], feeds: dict[str, Any]) -> list[Any]:
        ids = feeds["input_ids"]
        if len(ids) > 1:
            self.batch_running.set()
            assert self.release.wait(timeout=30)
        return [np.ones((*ids.shape, 384), dtype=np.float32)]


async def test_a_question_does_not_wait_behind_a_batch(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    session = _BlockingSession()
    _fake_model(monkeypatch, tmp_path, session)
    embedder = await onnx_embedder.OnnxEmbedder.load(EmbedSettings(runtime="onnx"), tmp_path)
    try:
        batch = asyncio.create_task(embedder.embed_batch(["a document", "another one"]))
        assert await asyncio.to_thread(session.batch_running.wait, 30)
        vector = await asyncio.wait_for(embedder.embed("who is the president?"), timeout=10)
        assert len(vector) == 384 and not batch.done()
        session.release.set()
        assert len(await batch) == 2
    finally:
        session.release.set()
        await embedder.aclose()


class _ThreadRecordingSession(_FakeSession):
    """Records the thread each run is made on."""

    def __init__(self) -> None:
        self.threads: list[int] = []

    def run(self, _outputs: list[str], feeds: dict[str, Any]) -> list[Any]:
        self.threads.append(threading.get_ident())
        return [np.ones((*feeds["input_ids"].shape, 384), dtype=np.float32)]


@pytest.mark.parametrize("inline", [False, True])
async def test_an_inline_question_runs_on_the_callers_thread(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, inline: bool
) -> None:
    session = _ThreadRecordingSession()
    _fake_model(monkeypatch, tmp_path, session)
    settings = EmbedSettings(runtime="onnx", question_inline=inline)
    embedder = await onnx_embedder.OnnxEmbedder.load(settings, tmp_path)
    try:
        vector = await embedder.embed("who is the president?")
        await embedder.embed_batch(["a document", "another one"])
    finally:
        await embedder.aclose()
    here = threading.get_ident()
    assert vector == pytest.approx([1 / np.sqrt(384)] * 384)
    # The question on the caller's thread only when inline; batches never.
    assert (session.threads[0] == here) is inline
    assert session.threads[1] != here
