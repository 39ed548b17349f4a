"""What one text costs the ONNX model, and what int8 would save and lose (issue 26).

    python -m bench.onnx_cost [--out results/bench]

Times the cached ONNX export on one intra-op thread, not spinning, as thread CPU seconds
(the figure the machine's other load moves least) at 4, 14 (a CLARK-News question's
median), 28, 64 and 128 tokens; then the graph of ``FACTSTREAM_EMBED_QUANTIZE=int8``
(embed/onnx_quantize.py), its CPU time at 14 tokens and its vectors' cosine to the float32
graph's on the CLARK-News questions. Writes
``<stamp>-onnx-cost.json``; under 30 s.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import typer

from bench.corpus import DEFAULT_DATA, questions
from factstream.config import Settings
from factstream.embed.child import resolve_model
from factstream.embed.onnx_embedder import _mean_normalised, _session, _tokenizer
from factstream.embed.onnx_export import INPUTS, OUTPUT, ensure_onnx, onnx_dir
from factstream.embed.onnx_quantize import ensure_int8
from factstream_lab.provenance import stamped

__all__ = ["main"]

_TOKENS = (4, 14, 28, 64, 128)
_REPEATS = 40


def _feeds(ids: list[int], names: set[str]) -> dict[str, Any]:
    array = np.asarray([ids], dtype=np.int64)
    feeds = {"input_ids": array, "attention_mask": np.ones_like(array)}
    feeds["token_type_ids"] = np.zeros_like(array)
    return {k: feeds[k] for k in INPUTS if k in names}


def _cpu_ms(session: Any, ids: list[int]) -> float:
    """Median thread CPU milliseconds of one run on ``ids``."""
    feeds = _feeds(ids, {i.name for i in session.get_inputs()})
    for _ in range(5):
        session.run([OUTPUT], feeds)
    seconds = []
    for _ in range(_REPEATS):
        started = time.thread_time()
        session.run([OUTPUT], feeds)
        seconds.append(time.thread_time() - started)
    return round(float(np.median(seconds)) * 1000, 2)


def _vectors(session: Any, encoded: list[list[int]]) -> Any:
    names = {i.name for i in session.get_inputs()}
    rows = []
    for ids in encoded:
        feeds = _feeds(ids, names)
        rows.append(_mean_normalised(session.run([OUTPUT], feeds)[0], feeds["attention_mask"])[0])
    return np.asarray(rows)


def main(out: Path = Path("results/bench"), data: Path = DEFAULT_DATA) -> None:
    """Measure and write the results file."""
    settings = Settings()
    model_dir = Path(resolve_model(settings.embed.model))
    path = ensure_onnx(onnx_dir(settings.embed, settings.local.cache_dir), model_dir)
    tokenizer, _ = _tokenizer(model_dir)
    fp32 = _session(path, 1, spin=False)
    encoded = [e.ids for e in tokenizer.encode_batch(questions(data)[:200])]
    median_tokens = int(np.median([len(ids) for ids in encoded]))
    by_tokens = {str(n): _cpu_ms(fp32, [101, *range(2000, 2000 + n - 2), 102]) for n in _TOKENS}
    q8 = _session(ensure_int8(path), 1, spin=False)  # FACTSTREAM_EMBED_QUANTIZE=int8's graph
    q8_ms = _cpu_ms(q8, [101, *range(2000, 2012), 102])
    distance = 1.0 - (_vectors(q8, encoded) * _vectors(fp32, encoded)).sum(axis=1)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    result = {
        "timestamp": stamp,
        "what": "thread CPU ms of one run, one intra-op thread, median of 40",
        "question_tokens_median": median_tokens,
        "fp32_cpu_ms_by_tokens": by_tokens,
        "int8_cpu_ms_14_tokens": q8_ms,
        "int8_cosine_distance_to_fp32": {
            "questions": len(encoded),
            "worst": float(f"{distance.max():.3g}"),
            "median": float(f"{np.median(distance):.3g}"),
        },
    }
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{stamp}-onnx-cost.json"
    target.write_text(json.dumps(stamped(result), indent=2) + "\n")
    print(json.dumps(result, indent=2))
    print(f"results: {target}")


if __name__ == "__main__":
    typer.run(main)
