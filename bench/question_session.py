"""The question's model call by ONNX Runtime's graph optimisation level, in CPU time (issue 37).

    python -m bench.question_session [--questions 300] [--out results/bench]

Opens the cached export (float32, and the int8 form beside it when there is one) in
sessions of one intra-op thread at each graph optimisation level, as the embedder opens
its own otherwise (``onnx_embedder._session``); they take turns on each CLARK-News
question, tokenised once. One thread, so the calling thread's CPU time is the whole call's:
a unit the machine's load moves little, unlike wall time. Writes
``<stamp>-question-session.json``: per session the mean and median CPU ms and the mean's
ratio to float32 at ORT_ENABLE_ALL (the embedder's level). No service is needed.
"""

from __future__ import annotations

import os
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import onnxruntime as ort
import typer

from bench.corpus import DEFAULT_DATA, questions
from bench.report import write_named
from factstream.config import load_settings
from factstream.embed.child import resolve_model
from factstream.embed.onnx_embedder import _tokenizer
from factstream.embed.onnx_export import cached_onnx_path, onnx_dir
from factstream_lab import provenance

__all__ = ["main"]

_WARM_UP = 10
_LEVELS = {
    "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
}


def _session(path: Path, level: ort.GraphOptimizationLevel) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = level
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def main(
    questions_n: Annotated[int, typer.Option("--questions")] = 300,
    out: Path = Path("results/bench"),
) -> None:
    """Time each session on the same questions, write the results file."""
    settings = load_settings()
    model_dir = Path(resolve_model(settings.embed.model))
    export = cached_onnx_path(onnx_dir(settings.embed, settings.local.cache_dir), model_dir)
    if not export.is_file():
        raise typer.BadParameter(f"no export at {export}: python -m factstream.embed.onnx_export")
    sessions = {f"float32, {name}": _session(export, level) for name, level in _LEVELS.items()}
    int8 = export.with_name("model.int8.onnx")
    if int8.is_file():
        sessions["int8, all"] = _session(int8, _LEVELS["all"])
    tokenizer, _ = _tokenizer(model_dir)
    inputs = {name: {i.name for i in s.get_inputs()} for name, s in sessions.items()}
    cpu: dict[str, list[float]] = {name: [] for name in sessions}
    load_before = [round(x, 2) for x in os.getloadavg()]
    for i, text in enumerate(questions(DEFAULT_DATA)[: questions_n + _WARM_UP]):
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        feeds["token_type_ids"] = np.zeros_like(ids)
        names = list(sessions)
        for name in names[i % len(names) :] + names[: i % len(names)]:
            started = time.thread_time()
            sessions[name].run(None, {k: v for k, v in feeds.items() if k in inputs[name]})
            if i >= _WARM_UP:
                cpu[name].append(time.thread_time() - started)
    base = statistics.fmean(cpu["float32, all"])
    result: dict[str, Any] = {
        "timestamp": datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ"),
        "questions": questions_n,
        "commit": provenance.commit(),
        "load_avg_before": load_before,
        "load_avg_after": [round(x, 2) for x in os.getloadavg()],
        "intra_op_threads": 1,
        "thread_cpu_ms": {
            name: {
                "mean": round(statistics.fmean(v) * 1000, 3),
                "median": round(statistics.median(v) * 1000, 3),
                "ratio_to_float32_all": round(statistics.fmean(v) / base, 3),
            }
            for name, v in cpu.items()
        },
    }
    write_named(result, out, "question-session")


if __name__ == "__main__":
    typer.run(main)
