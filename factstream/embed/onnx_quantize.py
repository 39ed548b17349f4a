"""The ONNX export with int8 weights (FACTSTREAM_EMBED_QUANTIZE=int8), derived once and kept.

ONNX Runtime's dynamic quantization stores the MatMuls' weights as uint8, one scale per
output column, and quantizes their inputs at run time; each layer's second feed-forward
MatMul (it reads the GELU's long-tailed output), the embedding lookups, the layer norms and
the attention stay float32. A question was embedded in 0.82 of the float32 time (p50, on 2
loaded cores; docs/benchmarks.md). Its vectors are not the reference's (cosine about 0.997
to float32's, not 1e-4), and the activations' scale is one per call, so a text's vector
moves a little with the texts batched beside it: it is judged by retrieval. A store and the
questions asked of it must be embedded with the same setting.

The quantized file lies beside the export it comes from (``model.int8.onnx`` in the same
folder, the folder named by the model files' hash), written under a temporary name and
renamed, so two processes may derive it at once.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from factstream.errors import EmbedError

__all__ = ["INT8_NAME", "ensure_int8", "int8_path"]

INT8_NAME = "model.int8.onnx"


def int8_path(export: Path) -> Path:
    """Where the int8 form of ``export`` is kept: beside it."""
    return export.with_name(INT8_NAME)


def _down_projections(export: Path) -> list[str]:
    """The MatMuls whose weights have more rows than columns: each layer's second
    feed-forward one, which reads the GELU's output, whose long tail quantizes worst; they
    stay float32."""
    import onnx  # noqa: PLC0415

    graph = onnx.load(str(export)).graph
    shapes = {w.name: tuple(w.dims) for w in graph.initializer}
    return [
        node.name
        for node in graph.node
        if node.op_type == "MatMul"
        and len(shape := shapes.get(node.input[1], ())) == 2
        and shape[0] > shape[1]
    ]


def ensure_int8(export: Path) -> Path:
    """The int8 form of the ONNX file ``export``, quantized first if it is not there yet.

    Raises:
        EmbedError: the quantization failed.
    """
    target = int8_path(export)
    if target.is_file():
        return target
    from onnxruntime.quantization import QuantType, quantize_dynamic  # noqa: PLC0415 - slow

    fd, staging = tempfile.mkstemp(prefix=".int8-", suffix=".onnx", dir=export.parent)
    os.close(fd)
    try:
        quantize_dynamic(
            export,
            staging,
            weight_type=QuantType.QUInt8,
            per_channel=True,  # one scale per output column: a per-tensor scale lost 3-4%
            op_types_to_quantize=["MatMul"],
            nodes_to_exclude=_down_projections(export),
        )
        Path(staging).chmod(0o644)  # mkstemp's 0600: readable by the services' other users
        Path(staging).replace(target)
    except Exception as exc:  # onnx and onnxruntime raise their own kinds
        raise EmbedError(f"cannot quantize {export} to int8: {exc}") from exc
    finally:
        Path(staging).unlink(missing_ok=True)
    return target
