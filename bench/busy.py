"""Benchmark 6: one busy namespace (issue 18): documents/s at windows W = 1, 4, 16, 32.

The first ``docs`` CLARK-News documents (stated, bench.corpus) go to ONE namespace through a
real `factstream worker` (real Kafka, Weaviate) whose LM is the deterministic stub with a
fixed latency per call and no concurrency limit. For each window W the worker gets
FACTSTREAM_EDITOR_WINDOW=W on a fresh deployment (topics, collections, stub), edits a
warm-up document in another namespace (the model load is not timed), then the timed
documents. Documents/s runs from their publish to the moment the worker's
factstream_documents_total counts them all (polled every 0.2 s, with its
factstream_documents_in_flight).

Per W: how many waits for an earlier commit and re-decisions changed the outcome
(``outcomes_changed``: a wait, the candidates then judged; a re-decision, the plan). LM
calls and tokens per document (the stub's /stats), re-decisions by reason and by
when they were made (early, after an earlier commit; or at the document's commit) and their
LM tokens (the worker's factstream_redecisions_total and factstream_redecision_tokens_total),
the LM tokens the stub served over the serial run's (``extra_token_share``: what the window
cost in tokens, cancelled stale work included), the conflict rate (re-decisions per
document) and
the bound min(W / (LM calls per document x latency), embedding-only bound) with the
calls per document of the serial run (W=1). The embedding-only bound embeds, in one
batched call, the texts the serial run embedded: its documents and every fact its
changelog changed. Each W's changelog is compared with the serial run's (the edits of each
document, as multisets): the window must not change the result. The stub's judgement depends
on the whole prompt (Decisions.whole_prompt), so a decision made on other candidates (or the
same in another order) than one at a time shows changes the changelog.

Predicted dependencies (agents/dependencies.py): every W runs with the configured
FACTSTREAM_EDITOR_DEPENDENCIES policy; ``--dependencies`` runs other policies at W=16
against the same serial run. Per W the documents that waited for an earlier one, how far,
and the chain bound those waits leave (bench/chains.py, from the worker's log); the gaps
between commits by what each document did, the commit's own time (seconds per step) and
its requests (Weaviate reads and writes, texts embedded, Kafka requests: counts the load
does not move), and the chain bound counting it (bench/commits.py, from the same log).

Until the worker has the window (EditorSettings.window), FACTSTREAM_EDITOR_WINDOW is not
passed (Settings refuses unknown variables): every run is then serial, and the results say
so (``window_applied``).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from bench.bounds import GOAL_W, bound, goals, lm_bound
from bench.chains import dependency_figures, waits_in
from bench.commits import commit_figures
from bench.corpus import load, stream_documents, stub_rules
from bench.harness import Deployment
from bench.scrape import Samples, scrape
from bench.sizes import Size
from factstream.config import EditorSettings, Settings
from factstream.embed.factory import load_embedder
from factstream.streams.changelog import read_changelog
from factstream.topics.records import Document, EditOp, FactEdit
from factstream_lab.stack.process import free_port

__all__ = ["NAMESPACE", "run", "window_supported"]

NAMESPACE = "busy"
_WARM_UP = "warm-up"
_DOCS = "factstream_documents_total"
_IN_FLIGHT = "factstream_documents_in_flight"
_REDECISIONS = "factstream_redecisions_total"
_REDECISION_TOKENS = "factstream_redecision_tokens_total"
_TOKENS = "factstream_lm_tokens_total"
_REFUSED = "factstream_lm_refused_total"
_WAITS = "factstream_dependency_waits_total"
_OUTCOMES = "factstream_window_outcomes_total"
_GROUNDING = ("no_words", "prompt_text", "placeholder", "ungrounded_entity", "ungrounded_number")


def window_supported() -> bool:
    """Whether this worker reads FACTSTREAM_EDITOR_WINDOW (EditorSettings has ``window``)."""
    return "window" in EditorSettings.model_fields


def _env(
    window: int, max_window: int, metrics_port: int, policy: str, lm_concurrency: int | None = None
) -> dict[str, str]:
    env = {
        # Predicted dependencies (agents/dependencies.py): the policy for unknown plans.
        "FACTSTREAM_EDITOR_DEPENDENCIES": policy,
        "FACTSTREAM_WORKER_METRICS_PORT": str(metrics_port),
        "FACTSTREAM_WORKER_METRICS_HOST": "127.0.0.1",
        # The LM client must not be what limits: every document of the widest window may
        # have its calls in flight at once (classify, extract, rewrites); unless the run
        # measures a given concurrency (--lm-concurrency, e.g. the defaults').
        "FACTSTREAM_LM_MAX_CONCURRENCY": str(lm_concurrency or 4 * max_window),
        # The check the editor will run by default; the stated corpus passes it.
        "FACTSTREAM_EDITOR_GROUNDING": "true",
    }
    if window_supported():
        env["FACTSTREAM_EDITOR_WINDOW"] = str(window)
    return env


def _warm_up(doc: Document) -> Document:
    return doc.model_copy(update={"id": "warm-up", "namespace": _WARM_UP})


async def _wait_for(
    dep: Deployment, port: int, documents: int, timeout_s: float
) -> tuple[float, Samples, int]:
    """Poll /metrics until the worker has handled ``documents``; (when, metrics, most in
    flight seen)."""
    deadline, most = time.monotonic() + timeout_s, 0
    while True:
        now = time.monotonic()
        try:
            samples = await scrape(port)
        except httpx.HTTPError:  # the worker's /metrics is not up yet
            samples = Samples({})
        most = max(most, int(samples.total(_IN_FLIGHT)))
        if samples.total(_DOCS) >= documents:
            return now, samples, most
        if now > deadline:
            raise TimeoutError(f"{samples.total(_DOCS):.0f} of {documents} documents handled")
        dep.check_alive()
        await asyncio.sleep(0.2)


async def _changelog(dep: Deployment) -> list[FactEdit]:
    return [e async for e in read_changelog(dep.settings.kafka) if e.namespace == NAMESPACE]


def _signature(edits: list[FactEdit]) -> Counter[tuple[str, str, str, bool, str | None]]:
    """The edits of each document, ids aside."""
    return Counter((e.document_id, e.op.value, e.text, e.truth, e.previous_text) for e in edits)


def _embedded_texts(docs: list[Document], edits: list[FactEdit]) -> list[str]:
    """What the pipeline embeds: each document, and each fact its batch changed (a rewrite
    changes the fact it replaces and adds one)."""
    texts = [doc.text for doc in docs]
    for edit in edits:
        texts.append(edit.text)
        if edit.op is EditOp.REWRITE and edit.previous_text is not None:
            texts.append(edit.previous_text)
    return texts


async def _embed_bound(settings: Settings, texts: list[str], docs: int) -> dict[str, Any]:
    embedder = await load_embedder(settings.embed, settings.local.cache_dir)
    try:
        await embedder.embed_batch(texts[:8])  # warm
        started = time.perf_counter()
        await embedder.embed_batch(texts)
        seconds = time.perf_counter() - started
    finally:
        await embedder.aclose()
    return {"texts": len(texts), "seconds": round(seconds, 3), "docs_per_s": docs / seconds}


def _delta(after: dict[str, Any], before: dict[str, Any]) -> tuple[int, dict[str, int], int]:
    """LM requests, requests by task and tokens the stub served between two /stats."""
    tasks = Counter(after["by_task"])
    tasks.subtract(before["by_task"])
    return (
        after["requests"] - before["requests"],
        {task: n for task, n in sorted(tasks.items()) if n},
        after["total_tokens"] - before["total_tokens"],
    )


async def _one(
    base: Settings,
    workdir: Path,
    size: Size,
    window: int,
    docs: list[Document],
    rules: dict[str, Any],
    policy: str,
) -> tuple[dict[str, Any], list[FactEdit]]:
    """One window on a fresh deployment: its figures and its changelog."""
    port = free_port()
    env = _env(window, max(size.busy_windows), port, policy, size.busy_lm_concurrency)
    folder = workdir / f"busy-w{window}-{policy}"
    dep = Deployment(base, folder, stub=True, **env)
    try:
        dep.start_stub(rules, size.busy_latency_ms)
        await dep.create_topics()
        dep.start_worker()
        await dep.publish([_warm_up(docs[0])])
        _, warm, _ = await _wait_for(dep, port, 1, timeout_s=600)
        stats_before = await dep.stub_stats()
        started = time.monotonic()
        await dep.publish(docs)
        per_doc_s = 20 * size.busy_latency_ms / 1000 + 5
        done, samples, most = await _wait_for(
            dep, port, 1 + len(docs), timeout_s=300 + per_doc_s * len(docs)
        )
        stats = await dep.stub_stats()
        edits = await _changelog(dep)
    finally:
        await dep.close()
    seconds, since_warm = done - started, samples.minus(warm)
    figures = _figures(window, docs, seconds, since_warm, most, stats_before, stats)
    log = "".join(path.read_text(errors="replace") for path in folder.glob("worker-*.log"))
    figures["dependencies"] = policy
    waits, latency_s = waits_in(log), size.busy_latency_ms / 1000
    figures["waited"] = dependency_figures(docs, waits, window, latency_s)
    # Where the time went: the gaps between commits, by what each document did.
    figures["commits"] = commit_figures(log, docs, waits, window, latency_s)
    return figures, edits


def _figures(
    window: int,
    docs: list[Document],
    seconds: float,
    samples: Samples,
    most_in_flight: int,
    stats_before: dict[str, Any],
    stats: dict[str, Any],
) -> dict[str, Any]:
    calls, by_task, stub_tokens = _delta(stats, stats_before)
    tokens = samples.total(_TOKENS)
    redecisions = samples.by_label(_REDECISIONS, "reason")
    redecision_tokens = samples.by_label(_REDECISION_TOKENS, "task")
    refused = sum(samples.total(_REFUSED, reason=r) for r in _GROUNDING)
    n = len(docs)
    return {
        "window": window,
        "documents": n,
        "seconds": round(seconds, 2),
        "docs_per_s": round(n / seconds, 3),
        "outcomes": {k: int(v) for k, v in samples.by_label(_DOCS, "outcome").items() if v},
        "lm_calls": calls,
        "lm_calls_by_task": by_task,
        "lm_calls_per_doc": round(calls / n, 3),
        "lm_tokens": int(tokens),
        "stub_tokens": stub_tokens,
        "max_lm_in_flight": stats["max_in_flight"],
        "max_documents_in_flight": most_in_flight,
        "redecisions": {k: int(v) for k, v in redecisions.items()},
        # early: after an earlier commit, before the document's turn; commit: at its turn
        "redecisions_at": {k: int(v) for k, v in samples.by_label(_REDECISIONS, "at").items() if v},
        "conflict_rate": round(sum(redecisions.values()) / n, 4),
        "redecision_tokens": {k: int(v) for k, v in redecision_tokens.items()},
        "redecision_token_share": round(sum(redecision_tokens.values()) / tokens, 4)
        if tokens
        else 0.0,
        "grounding_refused": int(refused),
        "dependency_waits": {k: int(v) for k, v in samples.by_label(_WAITS, "on").items() if v},
        "outcomes_changed": outcomes_changed(samples),
    }


def outcomes_changed(samples: Samples) -> dict[str, dict[str, float]]:
    """Per step (wait: for an earlier commit; early, commit: a re-decision), how many there
    were and how many changed the outcome (a wait, the candidates judged; a re-decision,
    the plan): the share that bounds what any smarter scheme can gain (issue 39)."""
    found: dict[str, dict[str, float]] = {}
    for step in ("wait", "early", "commit"):
        changed = samples.total(_OUTCOMES, step=step, changed="true")
        same = samples.total(_OUTCOMES, step=step, changed="false")
        if changed + same:
            total = changed + same
            found[step] = {
                "count": int(total),
                "changed": int(changed),
                "changed_share": round(changed / total, 4),
            }
    return found


def _bounded(
    runs: dict[int, dict[str, Any]], calls_per_doc: float, latency_s: float, embed: float
) -> None:
    for window, figures in runs.items():
        limit = bound(window, calls_per_doc, latency_s, embed)
        figures["lm_bound_docs_per_s"] = round(lm_bound(window, calls_per_doc, latency_s), 3)
        figures["bound_docs_per_s"] = round(limit, 3)
        figures["bound_share"] = round(figures["docs_per_s"] / limit, 3)


async def run(base: Settings, size: Size, workdir: Path, data: Path) -> dict[str, Any]:
    """Every window of ``size.busy_windows``, smallest first (the serial run: W=1)."""
    clark = load(data)
    # The stub's judgement depends on the whole prompt too (issue 39): a decision made on
    # other candidates than one at a time shows cannot leave the changelog equal by chance.
    rules = {**stub_rules(clark), "whole_prompt": True}
    docs = stream_documents(clark, size.busy_docs, [NAMESPACE])
    windows = sorted(set(size.busy_windows))
    runs: dict[int, dict[str, Any]] = {}
    serial: list[FactEdit] = []
    embed: dict[str, Any] = {}
    policy = base.editor.dependencies
    for window in windows:
        figures, edits = await _one(base, workdir, size, window, docs, rules, policy)
        if not runs:
            serial = edits
            embed = await _embed_bound(base, _embedded_texts(docs, edits), len(docs))
        figures["edits"] = len(edits)
        figures["changelog_equals_serial"] = _signature(edits) == _signature(serial)
        runs[window] = figures
        # Every LM token the stub served (cancelled stale work included) over the serial run's.
        first = runs[windows[0]]["stub_tokens"]
        figures["extra_token_share"] = (
            round(figures["stub_tokens"] / first - 1, 4) if first else 0.0
        )
    # The other policies at the goal's window, against the same serial run.
    others: dict[str, dict[str, Any]] = {}
    for other in (p for p in size.busy_policies if p != policy):
        figures, edits = await _one(base, workdir, size, GOAL_W, docs, rules, other)
        figures["changelog_equals_serial"] = _signature(edits) == _signature(serial)
        first = runs[windows[0]]["stub_tokens"]
        figures["extra_token_share"] = round(figures["stub_tokens"] / first - 1, 4)
        serial_docs_per_s = runs[windows[0]]["docs_per_s"]
        figures["speedup_over_serial"] = round(figures["docs_per_s"] / serial_docs_per_s, 2)
        others[other] = figures
    calls_per_doc = runs[windows[0]]["lm_calls_per_doc"]
    _bounded(runs, calls_per_doc, size.busy_latency_ms / 1000, embed["docs_per_s"])
    for figures in others.values():
        _bounded({GOAL_W: figures}, calls_per_doc, size.busy_latency_ms / 1000, embed["docs_per_s"])
    checked = goals(runs, size.busy_latency_ms / 1000)
    verdicts = [v for k, v in checked.items() if k.endswith("_met") and v is not None]
    return {
        "namespace": NAMESPACE,
        "documents": len(docs),
        "lm_latency_ms": size.busy_latency_ms,
        "lm_max_concurrency": size.busy_lm_concurrency or 4 * max(windows),
        "windows": windows,
        "dependencies": policy,
        "window_applied": window_supported(),
        "serial_window": windows[0],
        "serial_lm_calls_per_doc": calls_per_doc,
        "embed_bound": {**embed, "docs_per_s": round(embed["docs_per_s"], 2)},
        "runs": {str(w): figures for w, figures in runs.items()},
        f"other_policies_w{GOAL_W}": others,
        "goals": checked,
        # Met when all three goals were measured and met (None: not all measured).
        "met": all(verdicts) if len(verdicts) == 3 else None,
    }
