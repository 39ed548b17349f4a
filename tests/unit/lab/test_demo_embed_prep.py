"""The demo exports the embedding model beside the builds, so the worker finds it cached."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from factstream.config import Settings
from factstream.embed.onnx_export import cached_onnx_path
from factstream.errors import EmbedError
from factstream_lab.demo import embed_prep
from factstream_lab.demo.embed_prep import EMBED_STEP, start_onnx_export
from factstream_lab.stack.progress import Outcome, Progress


@pytest.fixture
def exports(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Path]:
    """Each export asked for; the fake writes the file as ensure_onnx would."""
    monkeypatch.setenv("FACTSTREAM_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("FACTSTREAM_EMBED_RUNTIME", "onnx")
    monkeypatch.setenv("FACTSTREAM_EMBED_DEVICE", "cpu")
    asked: list[Path] = []

    def fake_ensure(folder: Path, model_dir: Path) -> Path:
        target = cached_onnx_path(folder, model_dir)
        target.parent.mkdir(parents=True)
        target.write_bytes(b"onnx")
        asked.append(target)
        return target

    monkeypatch.setattr(embed_prep, "ensure_onnx", fake_ensure)
    return asked


def _run(progress: Progress) -> Path | None:
    with ThreadPoolExecutor(1) as pool:
        return start_onnx_export(Settings(), progress, pool).result()


def test_a_missing_export_is_made_once_as_a_step_then_reported_cached(
    exports: list[Path], tmp_path: Path
) -> None:
    first = Progress()
    path = _run(first)
    assert exports == [path] and path is not None and path.is_relative_to(tmp_path / "onnx")
    [made] = first.timings
    assert (made.service, made.title) == EMBED_STEP and made.outcome is Outcome.BUILT
    again = Progress()
    assert _run(again) == path
    assert len(exports) == 1
    [cached] = again.timings
    assert cached.outcome is Outcome.CACHED and cached.seconds is None


def test_nothing_is_exported_when_the_worker_embeds_with_torch(
    exports: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTSTREAM_EMBED_RUNTIME", "torch")
    progress = Progress()
    assert _run(progress) is None
    assert exports == [] and progress.timings == []


def test_a_failed_export_is_a_failed_step_and_not_raised_by_the_start(
    exports: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    def failing(folder: Path, model_dir: Path) -> Path:
        raise EmbedError("exporting failed: no torch")

    monkeypatch.setattr(embed_prep, "ensure_onnx", failing)
    progress = Progress()
    with ThreadPoolExecutor(1) as pool:
        future = start_onnx_export(Settings(), progress, pool)
    assert isinstance(future.exception(), EmbedError)
    [failed] = progress.timings
    assert failed.outcome is None and (failed.service, failed.title) == EMBED_STEP
