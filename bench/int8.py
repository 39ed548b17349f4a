"""The question's embedding with int8 weights against float32, in one run (issue 37, item 3).

    python -m bench.int8 [--questions 300] [--docs 160] [--out results/bench]

Two ONNX embedders are loaded the way the API loads its own (factstream.embed.factory), one
with FACTSTREAM_EMBED_QUANTIZE=none and one with int8; they take turns on each CLARK-News
question (``embed``, the ask path's call; no cache wraps these embedders), so the machine's
other load falls on both alike; then each embeds the same documents in one batch. Writes
``<stamp>-int8.json``: p50 / p95 ms of each, the ratios int8 / float32, and the cosine of
each question's two vectors. Whether int8 retrieves as well is judged by
``factstream eval update-retrieval`` and ``eval temporal`` run with each setting
(docs/benchmarks.md), not here. No service is needed.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from bench.corpus import DEFAULT_DATA, load, questions
from bench.harness import REPO
from bench.measure import summary_ms
from bench.report import new_report, write
from factstream.config import load_settings
from factstream.embed.factory import load_embedder

__all__ = ["main", "measure"]

_WARM_UP = 10


async def measure(asked: list[str], docs: list[str]) -> dict[str, Any]:
    """Each question embedded by float32 and int8 in turn; then a batch of ``docs`` each."""
    settings = load_settings()
    base = settings.embed.model_copy(update={"runtime": "onnx"})
    kinds = ("none", "int8")
    embedders = {
        kind: await load_embedder(
            base.model_copy(update={"quantize": kind}), settings.local.cache_dir
        )
        for kind in kinds
    }
    seconds: dict[str, list[float]] = {kind: [] for kind in kinds}
    batch_s: dict[str, float] = {}
    cosines: list[float] = []
    try:
        for i, question in enumerate(asked):
            vectors = {}
            order = kinds if i % 2 == 0 else kinds[::-1]  # neither always goes first
            for kind in order:
                started = time.perf_counter()
                vectors[kind] = await embedders[kind].embed(question)
                if i >= _WARM_UP:
                    seconds[kind].append(time.perf_counter() - started)
            cosines.append(float(np.dot(vectors["none"], vectors["int8"])))
        for kind in kinds:
            started = time.perf_counter()
            await embedders[kind].embed_batch(docs)
            batch_s[kind] = time.perf_counter() - started
    finally:
        for embedder in embedders.values():
            await embedder.aclose()
    summaries = {kind: summary_ms(seconds[kind]) for kind in kinds}
    return {
        "questions": len(seconds["none"]),
        "question_ms": {"float32": summaries["none"], "int8": summaries["int8"]},
        "question_ratio_p50": round(summaries["int8"]["p50_ms"] / summaries["none"]["p50_ms"], 3),
        "question_ratio_p95": round(summaries["int8"]["p95_ms"] / summaries["none"]["p95_ms"], 3),
        "batch_texts": len(docs),
        "batch_s": {"float32": round(batch_s["none"], 3), "int8": round(batch_s["int8"], 3)},
        "batch_ratio": round(batch_s["int8"] / batch_s["none"], 3),
        "cosine_min": round(min(cosines), 4),
        "cosine_mean": round(float(np.mean(cosines)), 4),
    }


def main(
    questions_n: Annotated[int, typer.Option("--questions", help="Questions timed.")] = 300,
    docs_n: Annotated[int, typer.Option("--docs", help="Documents in the batch.")] = 160,
    out: Annotated[Path, typer.Option(help="Where results go.")] = REPO / "results" / "bench",
    data: Annotated[Path, typer.Option(help="CLARK-News folder.")] = DEFAULT_DATA,
) -> None:
    """Time the question's embedding with int8 and float32 weights; write the results file."""
    asked = questions(data)[: questions_n + _WARM_UP]
    docs = [d.text for d in load(data).documents.values()][:docs_n]
    report = new_report("int8")
    report["benchmarks"]["int8"] = asyncio.run(measure(asked, docs))
    path = write(report, out)
    final = path.with_name(path.stem + "-int8.json")
    path.rename(final)
    typer.echo(report["benchmarks"]["int8"])
    typer.echo(f"results: {final}")


if __name__ == "__main__":
    typer.run(main)
