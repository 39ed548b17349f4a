"""`eval multihop --lm`: single vs multi_hop vs auto answers, with the self-check, by the LM.

On a generated world's multi-hop questions (``eval.multihop`` loads the world's triples
as structured facts valid over their intervals), each (question, answer) case is asked at
the time its answer became known, as multiple choice over every answer the question ever
has, once per mode through the query agent itself (``QueryEngine.ask``), with the
self-check on (``verify_answer.v1``, at most two rounds). Scored: exact match per mode,
the share of answers that took a second round, seconds per answer, LM tokens. With
SmolLM2-135M this proves the plumbing, not answer quality.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from factstream.ask.query import AskRequest, QueryEngine
from factstream.config import Settings
from factstream.temporal.intervals import at
from factstream.topics.records import AskMode
from factstream_lab.eval.datasets import load_clark
from factstream_lab.eval.multihop import ChainCase, load_cases, load_world_facts
from factstream_lab.eval.report import bar_figure, tokens_by_task, total_tokens

__all__ = ["MODES", "plot_multihop_lm", "run_multihop_lm", "score_mode"]

MODES: tuple[AskMode, ...] = ("single", "multi_hop", "auto")


async def score_mode(
    engine: QueryEngine,
    namespace: str,
    cases: Sequence[ChainCase],
    mode: AskMode,
    tick: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Ask every case in ``mode``; exact match, second rounds, modes used, seconds."""
    correct = second = multi = 0
    seconds: list[float] = []
    rows = []
    for case in cases:
        request = AskRequest(
            case.question, namespace, valid=at(case.when), choices=case.choices, mode=mode
        )
        started = time.perf_counter()
        result = await engine.ask(request)
        seconds.append(time.perf_counter() - started)
        right = result.answer == case.answer
        correct += right
        second += result.rounds == 2
        multi += result.mode == "multi_hop"
        rows.append(
            {
                "question": case.question,
                "gold": case.answer,
                "answer": result.answer,
                "correct": right,
                "mode": result.mode,
                "rounds": result.rounds,
                "confidence": result.confidence,
                "hops": [h.answer for h in result.hops],
            }
        )
        if tick is not None:
            tick()
    n = max(1, len(cases))
    return {
        "asked": len(cases),
        "correct": correct,
        "accuracy": correct / n,
        "second_rounds": second,
        "second_round_share": second / n,
        "answered_multi_hop": multi,
        "seconds_mean": round(sum(seconds) / n, 3),
        "answers": rows,
    }


async def run_multihop_lm(
    settings: Settings,
    data_dir: Path,
    modes: Sequence[AskMode] = MODES,
    limit: int | None = None,
    tick: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Load the world, ask its multi-hop cases in each mode on the configured LM, score."""
    from factstream.clients import open_clients  # the real adapters: not for unit tests

    started = time.monotonic()
    clark = load_clark(data_dir)
    cases = load_cases(data_dir / "questions.jsonl")[:limit]
    chance = sum(1 / max(1, len(c.choices)) for c in cases) / max(1, len(cases))
    namespace = f"eval-multihop-lm-{datetime.now(UTC):%Y%m%d%H%M%S%f}"
    api = settings.api.model_copy(update={"self_check": True, "max_rounds": 2})
    by_mode: dict[str, Any] = {}
    async with open_clients(settings, CollectorRegistry()) as clients:
        try:
            await load_world_facts(
                clients.store, clients.embedder, clark, namespace, structured=True
            )
            loaded = time.monotonic()
            engine = QueryEngine.of(clients, settings.model_copy(update={"api": api}))
            for mode in modes:
                by_mode[mode] = await score_mode(engine, namespace, cases, mode, tick)
        finally:
            await clients.store.drop_namespace(namespace)
        tokens = tokens_by_task(clients.metrics.registry.collect())
    return {
        "kind": "multihop-lm",
        "run": f"{datetime.now(UTC):%Y%m%d-%H%M%S}",
        "data": str(data_dir),
        "limit": limit,
        "cases": len(cases),
        "chance": chance,
        "lm": {"url": settings.lm.url, "model": settings.lm.model},
        "embed_model": settings.embed.model,
        "self_check": {"prompt": "verify_answer.v1", "max_rounds": 2},
        "modes": by_mode,
        "tokens": {"ask": tokens, "total": total_tokens(tokens)},
        "seconds": {
            "load": round(loaded - started, 1),
            "ask": round(time.monotonic() - loaded, 1),
        },
    }


def plot_multihop_lm(results: dict[str, Any], path: Path) -> Path:
    """A PNG of exact match and second-round share per mode, with chance as the line."""
    modes = list(results["modes"])
    series = {
        "exact match": [results["modes"][m]["accuracy"] for m in modes],
        "second rounds": [results["modes"][m]["second_round_share"] for m in modes],
    }
    title = f"Multi-hop answers, {results['lm']['model']} ({results['cases']} cases)"
    return bar_figure(path, title, modes, series, goal=None, chance=results["chance"])
