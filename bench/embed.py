"""Benchmark 7: the embedding runtimes side by side, in one run (issue 26).

For each runtime (torch: sentence-transformers in its process, the reference; onnx: ONNX
Runtime in a thread of this process) and each thread count, one embedder is loaded the way
the worker and the API load theirs (factstream.embed.factory) and times
- one question at a time (CLARK-News questions, ``embed``): p50 / p95 ms, the call as the
  query agent makes it, trip to the model's process or thread included;
- a batch: CLARK-News documents in one ``embed_batch`` call, texts per second.
The runtimes take turns on the same texts, so the machine's other load falls on both alike.
No service is needed.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bench.corpus import load, questions
from bench.measure import summary_ms
from bench.sizes import Size
from factstream.config import Settings
from factstream.embed.factory import choose_runtime, load_embedder

__all__ = ["CONFIGS", "GOAL_MS", "run"]

GOAL_MS = 5.0  # one question's embedding, p95
# runtime, threads (batches), question_threads and question_spin (calls of one text; onnx only)
Config = tuple[str, int, int, bool]
CONFIGS: tuple[Config, ...] = (
    ("torch", 1, 1, False),
    ("onnx", 1, 1, False),
    ("onnx", 1, 2, False),
    ("onnx", 1, 2, True),
    ("torch", 2, 2, False),
    ("onnx", 2, 2, False),
)
_WARM_UP = 10


def _key(runtime: str, threads: int, question_threads: int, spin: bool) -> str:
    """``runtime/threads/question_threads/spin|sleep`` (results before the spin setting
    have three parts: their one-text sessions with more threads than the batch's spun)."""
    return f"{runtime}/{threads}/{question_threads}/{'spin' if spin else 'sleep'}"


async def _one(
    settings: Settings, config: Config, asked: list[str], docs: list[str]
) -> dict[str, Any]:
    runtime, threads, question_threads, spin = config
    embed = settings.embed.model_copy(
        update={
            "runtime": runtime,
            "threads": threads,
            "question_threads": question_threads,
            "question_spin": spin,
        }
    )
    embedder = await load_embedder(embed, settings.local.cache_dir)
    try:
        await embedder.embed_batch(docs[:8])  # warm
        await embedder.embed(asked[0])
        seconds = []
        for i, question in enumerate(asked):
            started = time.perf_counter()
            await embedder.embed(question)
            if i >= _WARM_UP:
                seconds.append(time.perf_counter() - started)
        started = time.perf_counter()
        await embedder.embed_batch(docs)
        batch_s = time.perf_counter() - started
    finally:
        await embedder.aclose()
    return {
        "question": summary_ms(seconds),
        "batch_texts": len(docs),
        "batch_s": round(batch_s, 3),
        "batch_texts_per_s": round(len(docs) / batch_s, 1),
    }


async def run(settings: Settings, size: Size, _workdir: Path, data: Path) -> dict[str, Any]:
    """Each runtime and thread count: one question's latency, a batch's throughput."""
    asked = questions(data)[: size.embed_questions + _WARM_UP]
    docs = [d.text for d in load(data).documents.values()][: size.embed_docs]
    results = {_key(*c): await _one(settings, c, asked, docs) for c in CONFIGS}
    e = settings.embed
    runtime = choose_runtime(e)[0]
    onnx = runtime == "onnx"
    default = _key(
        runtime, e.threads, e.question_threads if onnx else e.threads, onnx and e.question_spin
    )
    p95 = results[default]["question"]["p95_ms"] if default in results else None
    return {
        "runtimes": results,
        "default": default,
        "goal": f"one question p95 <= {GOAL_MS:g} ms (the default runtime and threads)",
        "met": p95 is not None and p95 <= GOAL_MS,
    }
