"""Every benchmark at a tiny size on the real stack, so they keep working: the results file
has every benchmark's figures, plausible and positive (not a timed test)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench.report import rows
from bench.run import Bench, run_benchmarks
from bench.sizes import SMOKE
from factstream.config import Settings

# CI has nothing outside the repository: the first 80 CLARK-News documents live in it.
SLICE = Path(__file__).parents[1] / "data" / "clark-slice"
MILLION_STANDIN = 500  # the 1M case's own-Weaviate path, at a size a test can afford


def _positive(*values: Any) -> bool:
    return all(isinstance(v, int | float) and v > 0 for v in values)


def _check_throughput(r: dict[str, Any]) -> None:
    assert r["documents"] == SMOKE.throughput_docs and r["lanes"] == SMOKE.throughput_lanes
    assert sum(r["outcomes"].values()) == r["documents"]
    assert "dead_letter" not in r["outcomes"]
    assert r["embedded_texts"] >= r["documents"] and r["embed_calls"] >= r["documents"]
    assert _positive(r["pipeline_docs_per_s"], r["bound_docs_per_s"], r["ratio"])
    assert {"embed", "retrieve", "extract"} <= set(r["stage_seconds"])
    cpu = r["cpu_s"]
    assert {"embedding model", "bench (editor + materializer)", "stub LM"} <= set(cpu)
    assert cpu["machine (all processes)"] > 0
    assert r["embed_runtime"] == "onnx" and _positive(r["non_model_cpu_s_per_doc"])
    assert r["met"] == (r["ratio"] >= 0.8)


def _check_tokens(r: dict[str, Any]) -> None:
    assert 1 <= r["documents"] <= r["facts"] <= SMOKE.token_docs * SMOKE.token_max_facts
    assert set(r["prompts"]) == {
        "classify_facts.v1",
        "classify_facts.v2",
        "classify_facts.v3",
        "classify_fact.v1",
    }
    for usage in r["prompts"].values():
        assert _positive(usage["prompt_tokens_per_doc"], usage["completion_tokens_per_doc"])
    per_fact = r["prompts"]["classify_fact.v1"]["tokens_per_doc"]
    for prompt, ratio in r["ratios"].items():
        assert ratio == round(r["prompts"][prompt]["tokens_per_doc"] / per_fact, 3)
    assert r["ratio"] == r["ratios"][r["default_prompt"]]
    assert len(r["per_document"]) == r["documents"]


def _check_latencies(m: dict[str, Any], queries: int) -> None:
    _check_latencies_only(m, queries)
    assert m["retrieve"]["p50_ms"] <= m["p50_ms"] and _positive(m["search"]["p50_ms"])


def _check_ask(r: dict[str, Any], facts: int) -> None:
    step = r["facts"][str(facts)]
    assert step["added_facts"] == step["facts_in_namespace"] == facts and step["load_s"] >= 0
    _check_latencies(step, SMOKE.ask_queries)
    multi = step["multi_hop"]
    assert multi["count"] == SMOKE.ask_queries and _positive(
        multi["p50_ms"], multi["hops"]["p50_ms"], multi["outside_hops"]["p50_ms"]
    )
    # Without generation means without any LM call: the rules plan every question.
    assert multi["lm_plans"] == 0 and step["lm_plans"] == 0


def _check_million(r: dict[str, Any]) -> None:
    _check_ask(r, MILLION_STANDIN)
    rss = r["weaviate_rss_mib"]
    assert _positive(rss["empty"], rss["loaded"], r["weaviate_data_mib"], r["wall_s"])


def _check_e2e(r: dict[str, Any]) -> None:
    assert r["edit"]["documents"] == SMOKE.e2e_docs and _positive(r["edit"]["docs_per_s"])
    assert r["ask"]["count"] == SMOKE.e2e_questions and _positive(r["ask"]["p50_ms"])


def _check_backlog(r: dict[str, Any], out: Path) -> None:
    assert r["documents"] == SMOKE.backlog_docs
    assert sum(r["outcomes"].values()) == SMOKE.backlog_docs
    assert "dead_letter" not in r["outcomes"]
    lags = [lag for _, lag in r["lag_samples"]]
    assert lags[0] == SMOKE.backlog_docs and lags[-1] == 0
    assert lags == sorted(lags, reverse=True)  # committed offsets only move forward
    assert _positive(r["drain_s"], r["docs_per_s"])
    assert (out / r["plot"]).read_bytes().startswith(b"\x89PNG")


def _check_busy(r: dict[str, Any]) -> None:
    assert r["documents"] == SMOKE.busy_docs and r["windows"] == list(SMOKE.busy_windows)
    assert _positive(r["embed_bound"]["docs_per_s"], r["embed_bound"]["texts"])
    for figures in r["runs"].values():
        outcomes = figures["outcomes"]
        assert outcomes.get("applied", 0) >= 1 and "dead_letter" not in outcomes
        assert sum(outcomes.values()) == SMOKE.busy_docs
        assert _positive(figures["docs_per_s"], figures["lm_calls_per_doc"], figures["lm_tokens"])
        assert figures["lm_tokens"] == figures["stub_tokens"]  # the worker counts what it got
        assert figures["grounding_refused"] == 0  # the stated corpus is grounded
        assert figures["changelog_equals_serial"] and figures["edits"] >= 1
        assert figures["bound_share"] > 0


def _check_embed(r: dict[str, Any]) -> None:
    assert {key.split("/")[0] for key in r["runtimes"]} == {"torch", "onnx"}
    assert r["default"] == "onnx/1/2/sleep" and r["default"] in r["runtimes"]
    for figures in r["runtimes"].values():
        _check_latencies_only(figures["question"], SMOKE.embed_questions)
        assert figures["batch_texts"] == SMOKE.embed_docs
        assert _positive(figures["batch_s"], figures["batch_texts_per_s"])


def _check_latencies_only(m: dict[str, Any], count: int) -> None:
    assert m["count"] == count and _positive(m["p50_ms"], m["p95_ms"])
    assert m["p50_ms"] <= m["p95_ms"] <= m["max_ms"]


async def test_every_benchmark_runs_and_writes_its_results(
    settings: Settings, tmp_path: Path
) -> None:
    report, path = await run_benchmarks(
        settings,
        SMOKE,
        list(Bench),
        out=tmp_path,
        data=SLICE,
        million_facts=MILLION_STANDIN,
    )
    assert path.parent == tmp_path and path.name == f"{report['timestamp']}.json"
    written = json.loads(path.read_text())
    assert written["size"] == "smoke" and written["machine"]["cpus"] >= 1
    found = written["benchmarks"]
    assert list(found) == [b.value for b in Bench]
    errors = {name: r["trace"] for name, r in found.items() if "error" in r}
    assert not errors, errors
    _check_throughput(found["throughput"])
    _check_tokens(found["tokens"])
    _check_ask(found["ask"], SMOKE.ask_facts[0])
    # The default runtime is onnx: the torch reference is timed on the same facts beside it.
    step = found["ask"]["facts"][str(SMOKE.ask_facts[0])]
    assert step["runtime"] == "onnx"
    _check_latencies(step["torch_reference"], SMOKE.ask_queries)
    _check_latencies(step["again"], SMOKE.ask_queries)  # onnx once more, after the reference
    _check_million(found["ask_1m"])
    _check_e2e(found["e2e"])
    _check_backlog(found["backlog"], tmp_path)
    _check_busy(found["busy"])
    _check_embed(found["embed"])
    assert len(rows(written)) >= 10
