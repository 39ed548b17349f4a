"""Benchmark 3: ask latency without generation (retrieve + prompt build), p50 and p95.

One namespace is filled with synthetic facts whose vectors derive from real embeddings
(bench.corpus.FactPool), in steps (10k, then 100k ...), batch-inserted with precomputed
vectors through the fact store. At each step the CLARK-News questions are asked through the
query engine (factstream.ask.query: embed the question, hybrid search for facts true
now, facts as of then) and the ERASE A.3 prompt is built; the LM is not called. Beside
it, 2-hop questions on names of the pool's sentences ("Who is the chief executive of
NAME's employer?") are asked in mode multi_hop: planned by the rules, two hops of
entity-filtered search (``ask.chain``), the prompt built; no LM either.
Where the configured runtime is not torch, the same questions are then asked with the torch
reference and once more with the configured runtime (``again``): the goal is judged on the
first pass after the load, and ``again`` shows what a later pass takes on the same facts.
The 1M case runs on a Weaviate of its own (bench.own_weaviate), so its memory is measured
alone.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from bench.corpus import FactPool, load, pool_sentences, questions
from bench.harness import Deployment
from bench.measure import CpuMeter, summary_ms, wait_idle
from bench.own_weaviate import OwnWeaviate
from bench.sizes import Size
from factstream.ask.hop_rules import plan_by_rules
from factstream.ask.query import AskRequest, QueryEngine, prompt_facts
from factstream.ask.time_plan import has_temporal_cue
from factstream.ask.valid_time import ValidTimeSource, question_valid_time
from factstream.clients import Clients, open_clients
from factstream.config import Settings
from factstream.embed.base import Embedder
from factstream.embed.cache import CachedEmbedder
from factstream.embed.factory import choose_runtime, load_embedder
from factstream.prompts import answer
from factstream.store.base import StoredFact
from factstream.text.names import document_names
from factstream_lab.stack import manager
from factstream_lab.stack.process import read_pid

__all__ = ["GOAL_MS", "HOPS", "MILLION", "MILLION_GOAL_MS", "run", "run_million"]

GOAL_MS = 25.0  # p95 at 100k facts, retrieve + prompt build
MILLION = 1_000_000
MILLION_GOAL_MS = 50.0  # retrieval p95 at 1M facts
HOPS = 2  # the hops of the benchmark's multi-hop questions (employer, chief executive)
_NAMESPACE = "ask"
_CHUNK = 1000  # facts per upsert call (the store writes them in batches of its own size)
_PARALLEL = 2  # upsert calls in flight
_WARM_UP = 10


async def _pool(clients: Clients, data: Path, most: int) -> FactPool:
    needed = math.ceil(math.sqrt(most)) + 2  # n sentences make n * (n - 1) facts
    sentences = pool_sentences(load(data), max(needed, 64))
    vectors = await clients.embedder.embed_batch(sentences)
    return FactPool(sentences, np.asarray(vectors, dtype=np.float32))


async def _fill(
    clients: Clients, pool: FactPool, start: int, stop: int, progress: Callable[[int], None]
) -> None:
    async def upsert(a: int) -> None:
        chunk = [StoredFact(f, v) for f, v in pool.facts(_NAMESPACE, a, min(a + _CHUNK, stop))]
        await clients.store.upsert(_NAMESPACE, chunk)

    for first in range(start, stop, _CHUNK * _PARALLEL):
        last = min(first + _CHUNK * _PARALLEL, stop)
        await asyncio.gather(*(upsert(a) for a in range(first, last, _CHUNK)))
        progress(last)


async def _latencies(engine: QueryEngine, asked: list[str]) -> dict[str, Any]:
    total, retrieve, build, embed, search, lm_plans = [], [], [], [], [], 0
    for i, question in enumerate(asked):
        timings: dict[str, float] = {}
        started = time.perf_counter()
        facts = await engine.retrieve(AskRequest(question, _NAMESPACE), timings)
        built = time.perf_counter()
        ctx = answer.AnswerFreeContext(question=question, facts=tuple(prompt_facts(facts)))
        answer.FREE_V1.messages(ctx)
        done = time.perf_counter()
        if i >= _WARM_UP:
            total.append(done - started)
            retrieve.append(built - started)
            build.append(done - built)
            embed.append(timings["embed"])
            search.append(timings["retrieve"])
            lm_plans += _lm_plans(timings)
    return {
        **summary_ms(total),
        "retrieve": summary_ms(retrieve),
        "embed_question": summary_ms(embed),
        "search": summary_ms(search),
        "prompt_build": summary_ms(build),
        "lm_plans": lm_plans,
    }


def hop_questions(sentences: list[str], count: int) -> list[str]:
    """``count`` 2-hop questions on the names the sentences hold (cycled).

    Only names the rules plan (a name that keeps its own possessive, "Prince William's",
    makes "...'s's employer", which no rule reads) and that carry no temporal cue
    ("Former Chief Minister ..."): either would send the question to the LM (``plan_hops``,
    ``plan_time``), and this benchmark is the cost without any LM call.
    """
    names = list(dict.fromkeys(n for s in sentences for n in document_names(s) if " " in n))
    asked = [f"Who is the chief executive of {n}'s employer?" for n in names]
    kept = [q for q in asked if _rules_alone(q)]
    return [kept[i % len(kept)] for i in range(count)] if kept else []


def _rules_alone(question: str) -> bool:
    """Whether the engine reads the question without the LM: no time in it ("of Jan
    Boven's" reads as a month, and the hops are planned from the text without it), no
    temporal cue, and a rule plans the rest."""
    valid = question_valid_time(question, valid=None, as_of=None, now=datetime.now(UTC))
    return (
        valid.source is ValidTimeSource.CURRENT
        and not has_temporal_cue(valid.search_text)
        and plan_by_rules(valid.search_text) is not None
    )


def _lm_plans(timings: dict[str, float]) -> int:
    """1 when the question went to the LM for a plan (hops or valid time), else 0."""
    return int("plan_hops" in timings or "plan" in timings)


async def _multi_hop_latencies(engine: QueryEngine, asked: list[str]) -> dict[str, Any]:
    """Multi-hop latency without generation: plan, hops, the prompt built; and the time
    outside the hops (planning, the namespace check, any fill-in retrieval)."""
    total, hops, outside, lm_plans, chains = [], [], [], 0, 0
    for i, question in enumerate(asked):
        timings: dict[str, float] = {}
        started = time.perf_counter()
        request = AskRequest(question, _NAMESPACE, mode="multi_hop")
        gathered = await engine.gather(request, timings)
        ctx = answer.AnswerFreeContext(question=question, facts=tuple(prompt_facts(gathered.facts)))
        answer.FREE_V1.messages(ctx)
        if i >= _WARM_UP:
            took = time.perf_counter() - started
            total.append(took)
            hops.append(timings.get("hops", 0.0))
            outside.append(took - timings.get("hops", 0.0))
            lm_plans += _lm_plans(timings)
            chains += gathered.mode == "multi_hop" and len(gathered.hops) == 2
    return {
        **summary_ms(total),
        "hops": summary_ms(hops),
        "outside_hops": summary_ms(outside),
        "lm_plans": lm_plans,
        "two_hop_chains": chains,
    }


def _engine(clients: Clients, s: Settings, embedder: Embedder | None = None) -> QueryEngine:
    return QueryEngine.of(clients, s, embedder=embedder)


async def _reference(settings: Settings) -> Embedder | None:
    """The torch reference embedder when the configured runtime is another (compared at
    each step on the same facts and questions), else None."""
    if choose_runtime(settings.embed)[0] == "torch":
        return None
    return await load_embedder(
        settings.embed.model_copy(update={"runtime": "torch"}), settings.local.cache_dir
    )


def _fresh(clients: Clients, settings: Settings) -> QueryEngine:
    """The engine on the configured embedder with its question cache emptied: every question
    of a pass reaches the model, as a question not asked before does (the steps ask the same
    questions, and the cache would serve all but the first step's first pass)."""
    embedder = clients.embedder
    if isinstance(embedder, CachedEmbedder):
        return _engine(clients, settings, embedder.around(embedder.inner))
    return _engine(clients, settings)


async def _pass(
    run: Callable[[], Awaitable[dict[str, Any]]], weaviate_pid: int | None, loaded_at: float
) -> dict[str, Any]:
    """``run``'s figures, when it began after the load's end (s), and the Weaviate CPU it
    saw per question (ms): the queries' own and any background work (flushes, compaction)."""
    since = round(time.perf_counter() - loaded_at, 1)
    meter = CpuMeter({"weaviate": weaviate_pid} if weaviate_pid else {})
    figures = await run()
    used = meter.stop().get("weaviate")
    per_question = (
        round(1000 * used / (figures["count"] + _WARM_UP), 2) if used is not None else None
    )
    return {**figures, "since_load_s": since, "weaviate_cpu_ms_per_question": per_question}


async def _steps(
    clients: Clients,
    settings: Settings,
    data: Path,
    sizes: tuple[int, ...],
    queries: int,
    progress: Callable[[int], None],
    weaviate_pid: int | None,
    compare: bool = True,
) -> dict[str, Any]:
    """At each size: the load, then the passes in this order, each on the same questions.

    The first pass (the step's figures) and its 2-hop asks follow the load once Weaviate is
    idle (``wait_idle``); each embeds every question (``_fresh``). After the torch
    reference and Weaviate idle again, ``settled`` asks them again, embedding them again,
    and its 2-hop asks follow. Weaviate flushes its memtables some seconds after the load's
    last write and then compacts the new segments: seen to start as the first pass did
    (issue 37, docs/benchmarks.md), so the first pass may time a store still settling.
    ``again`` repeats the settled pass with the question cache full (repeated questions:
    no model call).
    """
    pool = await _pool(clients, data, max(sizes))
    asked = (questions(data) * (1 + (queries + _WARM_UP) // 428))[: queries + _WARM_UP]
    two_hops = hop_questions(pool.sentences, queries + _WARM_UP)
    loaded, results = 0, {}
    reference = await _reference(settings) if compare else None
    for n in sorted(sizes):
        started = time.perf_counter()
        await _fill(clients, pool, loaded, n, progress)
        loaded_at = time.perf_counter()
        settle_s = await wait_idle(weaviate_pid)
        counts = await clients.store.count_facts(_NAMESPACE)
        engine = _fresh(clients, settings)
        first = await _pass(partial(_latencies, engine, asked), weaviate_pid, loaded_at)
        results[str(n)] = step = {
            "load_s": round(loaded_at - started, 1),
            "settle_s": settle_s,
            "added_facts": n - loaded,
            "facts_in_namespace": counts.true + counts.false,
            "runtime": choose_runtime(settings.embed)[0],
            **first,
            "multi_hop": await _pass(
                partial(_multi_hop_latencies, engine, two_hops), weaviate_pid, loaded_at
            ),
        }
        if reference is not None:
            step["torch_reference"] = await _latencies(_engine(clients, settings, reference), asked)
        if compare:
            # Weaviate idle again: the flush of its memtables and the compaction of the new
            # segments, which may run during the first pass, are over.
            step["settle_again_s"] = await wait_idle(weaviate_pid)
            engine = _fresh(clients, settings)
            step["settled"] = await _pass(
                partial(_latencies, engine, asked), weaviate_pid, loaded_at
            )
            step["settled"]["multi_hop"] = await _pass(
                partial(_multi_hop_latencies, engine, two_hops), weaviate_pid, loaded_at
            )
            # The settled pass's questions once more, now from the question cache.
            step["again"] = await _pass(partial(_latencies, engine, asked), weaviate_pid, loaded_at)
        loaded = n
    if reference is not None:
        await reference.aclose()
    return results


def _weaviate_pid(settings: Settings) -> int | None:
    """The shared Weaviate's pid when this cache folder runs it."""
    (service,) = manager.build_services(settings, ["weaviate"])
    return read_pid(service.pidfile)


def _report(steps: dict[str, Any], goal_at: int, goal_ms: float, key: str) -> dict[str, Any]:
    """The goal judged on the settled pass where one ran (else the first), at ``goal_at``;
    the first pass's own verdict beside it, so that neither is hidden."""
    at = steps.get(str(goal_at))
    settled = at.get("settled") if at else None
    report: dict[str, Any] = {
        "facts": steps,
        "goal": f"p95 <= {goal_ms:g} ms at {goal_at} facts"
        + (", settled pass (questions embedded again)" if settled else ""),
    }
    for name, run in (("met", settled or at), ("first_pass_met", at if settled else None)):
        if run is None:
            continue
        p95 = run[key]["p95_ms"] if key != "total" else run["p95_ms"]
        report[name] = p95 <= goal_ms
        multi = run.get("multi_hop")
        if multi:
            # Issue 22: a chain of HOPS hops costs at most HOPS + 1 single asks at p95.
            ratio = multi["p95_ms"] / run["p95_ms"]
            prefix = "first_pass_" if name.startswith("first") else ""
            report[f"{prefix}multi_hop_ratio"] = round(ratio, 2)
            report[f"{prefix}multi_hop_met"] = ratio <= HOPS + 1
    report.setdefault("met", False)
    return report


async def run(
    base: Settings,
    size: Size,
    workdir: Path,
    data: Path,
    progress: Callable[[int], None] = lambda _: None,
) -> dict[str, Any]:
    """10k and 100k facts (full size) on the shared Weaviate, in a fresh collection."""
    dep = Deployment(base, workdir / "ask", stub=False)
    try:
        async with open_clients(dep.settings) as clients:
            steps = await _steps(
                clients,
                dep.settings,
                data,
                size.ask_facts,
                size.ask_queries,
                progress,
                _weaviate_pid(base),
            )
    finally:
        await dep.close()
    return _report(steps, max(size.ask_facts), GOAL_MS, "total")


async def run_million(
    base: Settings,
    size: Size,
    workdir: Path,
    data: Path,
    progress: Callable[[int], None] = lambda _: None,
    facts: int = MILLION,
) -> dict[str, Any]:
    """``facts`` facts on a Weaviate of its own: load time, memory, retrieval latency."""
    own = OwnWeaviate(base, workdir / "weaviate-1m")
    started = time.perf_counter()
    own.start()
    try:
        dep = Deployment(own.settings, workdir / "ask-1m", stub=False)
        async with open_clients(dep.settings) as clients:
            rss_before = own.rss_mib()
            steps = await _steps(
                clients, dep.settings, data, (facts,), size.ask_queries, progress, own.pid, False
            )
            rss_after = own.rss_mib()
    finally:
        own.stop()
    result = _report(steps, facts, MILLION_GOAL_MS, "retrieve")
    result["weaviate_rss_mib"] = {"empty": rss_before, "loaded": rss_after}
    result["weaviate_data_mib"] = own.data_mib
    result["wall_s"] = round(time.perf_counter() - started, 1)
    return result
