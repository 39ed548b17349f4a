"""The int8 form of an ONNX export (FACTSTREAM_EMBED_QUANTIZE=int8), on a small real graph."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from factstream.config import EmbedSettings
from factstream.embed import factory
from factstream.embed.factory import choose_runtime
from factstream.embed.onnx_quantize import INT8_NAME, ensure_int8, int8_path
from factstream.errors import EmbedError


def _two_layer(path: Path) -> Path:
    """x (n, 8) -> MatMul up (8 x 32) -> MatMul down (32 x 8): a feed-forward's shape."""
    rng = np.random.default_rng(7)
    up = numpy_helper.from_array(rng.normal(size=(8, 32)).astype(np.float32), "up")
    down = numpy_helper.from_array(rng.normal(size=(32, 8)).astype(np.float32), "down")
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "up"], ["h"], name="first"),
            helper.make_node("MatMul", ["h", "down"], ["y"], name="second"),
        ],
        "ffn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 8])],
        initializer=[up, down],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def _run(path: Path, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    out: np.ndarray = session.run(["y"], {"x": x})[0]
    return out


def test_int8_weights_beside_the_export_kept_once(tmp_path: Path) -> None:
    export = _two_layer(tmp_path / "digest" / "model.onnx")
    target = ensure_int8(export)
    assert target == int8_path(export) == export.with_name(INT8_NAME)
    ops = {node.name: node.op_type for node in onnx.load(str(target)).graph.node}
    # The up projection reads int8 weights; the down projection (more rows than columns)
    # stays float32.
    assert "MatMulInteger" in ops.values()
    assert ops.get("second") == "MatMul" and ops.get("first") != "MatMul"
    x = np.random.default_rng(1).normal(size=(4, 8)).astype(np.float32)
    expected, got = _run(export, x), _run(target, x)
    cosines = (
        (expected * got).sum(1) / np.linalg.norm(expected, axis=1) / np.linalg.norm(got, axis=1)
    )
    assert cosines.min() > 0.99 and not np.array_equal(expected, got)
    # Kept: asked again, the file is not derived again.
    stamp = target.stat().st_mtime_ns
    assert ensure_int8(export) == target and target.stat().st_mtime_ns == stamp
    assert [p.name for p in export.parent.iterdir() if p.name.startswith(".")] == []


def test_a_broken_export_is_an_embed_error(tmp_path: Path) -> None:
    export = tmp_path / "model.onnx"
    export.write_bytes(b"not an onnx graph")
    with pytest.raises(EmbedError, match="cannot quantize"):
        ensure_int8(export)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.onnx"]


def test_int8_runs_on_onnx_only(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(EmbedError, match="needs the onnx"):
        choose_runtime(EmbedSettings(runtime="torch", quantize="int8"))
    # auto would pick torch on a GPU; int8 weights are ONNX Runtime's, on the CPU.
    monkeypatch.setattr(factory, "resolve_device", lambda device: "cuda")
    assert choose_runtime(EmbedSettings(quantize="int8")) == ("onnx", "cpu")
    assert choose_runtime(EmbedSettings()) == ("torch", "cuda")
