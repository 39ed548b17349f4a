"""A sentence-transformers folder's transformer exported to ONNX once, cached by its files' hash.

The ONNX embedder (embed/onnx_embedder.py) runs the exported graph; pooling and normalising
stay in numpy beside it, as sentence-transformers does them. The export (torch.onnx with the
dynamo exporter, a few seconds to a minute) runs at provisioning time (`make provision` runs
``python -m factstream.embed.onnx_export``) or, when the cache has no export of these model
files yet, in a subprocess of the first embedder that needs it. It is checked before it is
kept: the ONNX graph must give torch's hidden states on a padded batch (a graph traced on an
unpadded example drops the attention mask and is wrong for every padded batch).

    python -m factstream.embed.onnx_export [--model FOLDER] [--onnx-dir DIR]   # print the path
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from factstream.config import EmbedSettings
from factstream.errors import EmbedError

__all__ = ["cached_onnx_path", "ensure_onnx", "export_onnx", "model_digest", "onnx_dir"]

# Part of the cache key: bump it when the export itself changes (inputs, opset, exporter).
EXPORT_VERSION = 1
OPSET = 18
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT = "last_hidden_state"
# What decides the exported graph: weights, architecture, and what the embedder reads beside it.
_HASHED = (
    "config.json",
    "model.safetensors",
    "pytorch_model.bin",
    "tokenizer.json",
    "sentence_bert_config.json",
    "modules.json",
    "1_Pooling/config.json",
)
_TOLERANCE = 1e-4  # largest hidden-state difference between ONNX Runtime and torch accepted


def model_digest(model_dir: Path) -> str:
    """sha256 of the model files that decide the export (and of the export's version)."""
    digest = hashlib.sha256(f"factstream-onnx-export-v{EXPORT_VERSION}".encode())
    for name in _HASHED:
        path = model_dir / name
        if path.is_file():
            digest.update(name.encode() + b"\0")
            with path.open("rb") as file:
                while chunk := file.read(1 << 20):
                    digest.update(chunk)
    return digest.hexdigest()


def onnx_dir(settings: EmbedSettings, cache_dir: Path) -> Path:
    """Where exports are kept: FACTSTREAM_EMBED_ONNX_DIR, else ``onnx/`` in the cache folder."""
    return settings.onnx_dir or cache_dir / "onnx"


def cached_onnx_path(exports: Path, model_dir: Path) -> Path:
    """Where the export of ``model_dir`` is kept in the folder of exports."""
    return exports / model_digest(model_dir)[:16] / "model.onnx"


def ensure_onnx(exports: Path, model_dir: Path) -> Path:
    """The cached export of ``model_dir``, exported first in a subprocess if there is none.

    The subprocess keeps torch out of the caller's memory. Two callers may export at once:
    each writes its own staging folder and the first rename wins.

    Raises:
        EmbedError: the export failed (the error carries the end of its output).
    """
    target = cached_onnx_path(exports, model_dir)
    if target.is_file():
        return target
    command = [sys.executable, "-m", __name__, "--model", str(model_dir)]
    command += ["--onnx-dir", str(exports)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)  # noqa: S603
    if done.returncode != 0 or not target.is_file():
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-20:])
        raise EmbedError(f"exporting {model_dir} to ONNX failed:\n{tail}")
    return target


def export_onnx(model_dir: Path, target: Path) -> Path:
    """Export ``model_dir``'s transformer to ``target`` (one self-contained file), checked.

    Raises:
        EmbedError: the export does not reproduce torch's hidden states.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch  # noqa: PLC0415 - heavy, only here
    from transformers import AutoModel  # noqa: PLC0415

    model = AutoModel.from_pretrained(
        str(model_dir), attn_implementation="sdpa", local_files_only=True
    ).eval()

    class _Hidden(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out.last_hidden_state

    # A padded example: traced on an all-ones mask, the graph would leave the mask out.
    ids = torch.tensor([[101, 2040, 2003, 1996, 2343, 102], [101, 2040, 2003, 102, 0, 0]])
    example = (ids, (ids != 0).long(), torch.zeros_like(ids))
    batch, seq = torch.export.Dim("batch"), torch.export.Dim("seq")
    target.parent.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent.parent))
    try:
        with torch.no_grad():
            torch.onnx.export(
                _Hidden(model),
                example,
                str(staging / target.name),
                dynamo=True,
                external_data=False,
                opset_version=OPSET,
                input_names=list(INPUTS),
                output_names=[OUTPUT],
                dynamic_shapes={name: {0: batch, 1: seq} for name in INPUTS},
            )
            expected = _Hidden(model)(*example).numpy()
        _check(staging / target.name, example, expected)
        staging.chmod(0o755)  # mkdtemp's 0700: readable by the services' other users too
        try:
            staging.rename(target.parent)
        except OSError:  # another process kept its export first: the same bytes
            if not target.is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _check(path: Path, example: tuple[Any, ...], expected: Any) -> None:
    import numpy as np  # noqa: PLC0415
    import onnxruntime as ort  # noqa: PLC0415

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds = {name: tensor.numpy() for name, tensor in zip(INPUTS, example, strict=True)}
    got = session.run([OUTPUT], feeds)[0]
    mask = feeds["attention_mask"][..., None].astype(bool)
    worst = float(np.abs(np.where(mask, got - expected, 0.0)).max())
    if worst > _TOLERANCE:
        raise EmbedError(f"the ONNX export differs from torch by {worst:.2e} (> {_TOLERANCE})")


def main(argv: list[str] | None = None) -> int:
    """Export the model (default: the bundled all-MiniLM-L6-v2) if needed; print the path."""
    from factstream.config import Settings  # noqa: PLC0415 - reads the environment
    from factstream.embed.child import resolve_model  # noqa: PLC0415

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a sentence-transformers folder (default: the bundled)")
    parser.add_argument(
        "--onnx-dir", type=Path, help="default: FACTSTREAM_EMBED_ONNX_DIR or CACHE_DIR/onnx"
    )
    args = parser.parse_args(argv)
    settings = Settings()
    model_dir = Path(args.model or resolve_model(settings.embed.model))
    exports = args.onnx_dir or onnx_dir(settings.embed, settings.local.cache_dir)
    target = cached_onnx_path(exports, model_dir)
    if target.is_file():
        print(f"onnx export cached: {target}", file=sys.stderr)
    else:
        print(f"exporting {model_dir} to ONNX ...", file=sys.stderr, flush=True)
        export_onnx(model_dir, target)
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
