"""The results file (results/bench/<timestamp>.json) and the table printed from it."""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from rich.table import Table

from bench.bounds import GOAL_BOUND_SHARE, GOAL_REDECISION_SHARE, GOAL_SPEEDUP, GOAL_W
from bench.harness import REPO
from factstream_lab.provenance import commit

__all__ = [
    "RESULTS",
    "Row",
    "busy_goals",
    "load",
    "markdown",
    "new_report",
    "rows",
    "table",
    "title",
    "write",
    "write_named",
]

RESULTS = REPO / "results" / "bench"
Row = tuple[str, str, str, str, str]  # benchmark, measure, value, goal, met


def _cpu_model() -> str:
    """The processor's model name (Linux /proc/cpuinfo), or "unknown"."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return "unknown"
    names = (line.split(":", 1)[1].strip() for line in lines if line.startswith("model name"))
    return next(names, "unknown")


def new_report(size: str, stamp: datetime | None = None) -> dict[str, Any]:
    """An empty report of a run at ``size``, with what it ran on."""
    when = stamp or datetime.now(UTC)
    return {
        "timestamp": when.strftime("%Y%m%dT%H%M%SZ"),
        "size": size,
        "commit": commit(),
        "machine": {
            "cpus": os.cpu_count(),
            "cpu_model": _cpu_model(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "load_avg_at_start": [round(x, 2) for x in os.getloadavg()],
        },
        "benchmarks": {},
    }


def write_named(result: dict[str, Any], out: Path, kind: str) -> Path:
    """Write a single benchmark's ``result`` as ``out/<timestamp>-<kind>.json``, print it
    and its path; returns the path."""
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{result['timestamp']}-{kind}.json"
    text = json.dumps(result, indent=2)
    target.write_text(text + "\n")
    print(f"{text}\nresults: {target}")
    return target


def write(report: dict[str, Any], out: Path) -> Path:
    """Write the report as ``<timestamp>.json`` in ``out``; returns the path."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{report['timestamp']}.json"
    report["machine"]["load_avg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    path.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    return path


def _met(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "NO")


def _throughput(r: dict[str, Any]) -> Iterator[Row]:
    yield (
        "1 pipeline, zero-latency LM",
        f"docs/s ({r['lanes']} namespaces at once) / embedding-only bound",
        f"{r['pipeline_docs_per_s']} / {r['bound_docs_per_s']} = {r['ratio']}",
        ">= 0.8",
        _met(r["met"]),
    )

    if len(r.get("trials", ())) > 1:
        yield (
            "1 pipeline, zero-latency LM",
            "ratio in each trial (the median one above)",
            ", ".join(str(t["ratio"]) for t in r["trials"]),
            "",
            "",
        )
    if "embed_busy_s" not in r:  # results from before the figure existed
        return
    yield (
        "1 pipeline, zero-latency LM",
        "embedding model busy / wall seconds (model calls)",
        f"{r['embed_busy_s']} / {r['seconds']} ({r['embed_model_calls']})",
        "",
        "",
    )
    cpu = dict(r.get("cpu_s", {}))
    machine, capacity = cpu.pop("machine (all processes)", None), cpu.pop("machine capacity", None)
    if machine is None or capacity is None:
        return
    yield (
        "1 pipeline, zero-latency LM",
        "CPU seconds by process; the machine's busy / capacity",
        ", ".join(f"{name} {seconds}" for name, seconds in cpu.items())
        + f"; {machine} / {capacity}",
        "",
        "",
    )
    if "non_model_cpu_s_per_doc" in r:
        ratio = r["non_model_over_model_cpu"]
        yield (
            "1 pipeline, zero-latency LM",
            f"CPU seconds per document outside the model / in it ({r['embed_runtime']})",
            f"{r['non_model_cpu_s_per_doc']} / {r['model_cpu_s_per_doc']} = {ratio}",
            "< 0.5 (if not 0.8 of the bound)",
            _met(ratio is not None and ratio < 0.5),
        )


def _tokens(r: dict[str, Any]) -> Iterator[Row]:
    per_fact = r["prompts"]["classify_fact.v1"]["tokens_per_doc"]
    for prompt, ratio in r["ratios"].items():
        batched = r["prompts"][prompt]["tokens_per_doc"]
        default = " (default)" if prompt == r["default_prompt"] else ""
        yield (
            "2 LM tokens per document",
            f"{prompt}{default} / classify_fact.v1, {r['facts_per_doc']} facts/doc",
            f"{batched} / {per_fact} = {ratio}",
            "<= 0.25",
            _met(ratio <= 0.25),
        )


def _ask(r: dict[str, Any], name: str, key: str, goal: str) -> Iterator[Row]:
    for facts, m in r["facts"].items():
        last = facts == max(r["facts"], key=int)
        settled = m.get("settled")
        yield from _ask_pass(r, name, key, goal, facts, m, settled, last)
        if "torch_reference" in m:
            ref = m["torch_reference"] if key == "total" else m["torch_reference"][key]
            yield (
                name,
                f"the same with torch embeddings (the reference), {int(facts):,} facts",
                f"{ref['p50_ms']} / {ref['p95_ms']}",
                "",
                "",
            )
        if settled is not None:
            yield from _ask_pass(r, name, key, goal, facts, settled, None, last)
        if "again" in m and settled is None:  # files before the settled pass
            again, first = m["again"], m["search"]
            yield (
                name,
                f"the same again with {m['runtime']} embeddings, after the reference, "
                f"{int(facts):,} facts; the store's search, first pass / again",
                f"{again['p50_ms']} / {again['p95_ms']}; {first['p50_ms']} / {first['p95_ms']}, "
                f"{again['search']['p50_ms']} / {again['search']['p95_ms']}",
                "",
                "",
            )
        elif "again" in m:
            again = m["again"]
            yield (
                name,
                f"repeated questions (the question cache), {int(facts):,} facts; "
                "of which the store's search",
                f"{again['p50_ms']} / {again['p95_ms']}; "
                f"{again['search']['p50_ms']} / {again['search']['p95_ms']}",
                "",
                "",
            )
        if "embed_question" in m and "runtime" in m:
            mine, theirs = m["embed_question"], m.get("torch_reference", {}).get("embed_question")
            yield (
                name,
                f"of which embedding the question p50 / p95 ms, {m['runtime']}"
                + (" (torch)" if theirs else ""),
                f"{mine['p50_ms']} / {mine['p95_ms']}"
                + (f" ({theirs['p50_ms']} / {theirs['p95_ms']})" if theirs else ""),
                "",
                "",
            )


def _ask_pass(
    r: dict[str, Any],
    name: str,
    key: str,
    goal: str,
    facts: str,
    m: dict[str, Any],
    settled: dict[str, Any] | None,
    last: bool,
) -> Iterator[Row]:
    """One pass's rows: the first after the load (``settled`` the later one, or None when
    none ran) or the settled one (``settled`` None, ``m`` it)."""
    part = m if key == "total" else m[key]
    what = "retrieve + prompt build" if key == "total" else "retrieval"
    first = "load_s" in m
    if first:
        when = f"first pass, {m['since_load_s']} s after the load" if "since_load_s" in m else ""
        runtime = f", {m['runtime']} embeddings" if "runtime" in m else ""
        head = f"(loaded in {m['load_s']} s{', ' + when if when else ''}){runtime}"
    else:
        head = f"(settled pass, {m['since_load_s']} s after the load)"
    judged = "first_pass_met" if first and settled is not None else "met"
    ratio = "first_pass_multi_hop_ratio" if judged == "first_pass_met" else "multi_hop_ratio"
    cpu = m.get("weaviate_cpu_ms_per_question")
    yield (
        name,
        f"{what} p50 / p95 ms, {int(facts):,} facts {head}"
        + ("; Weaviate CPU ms a question" if cpu is not None else ""),
        f"{part['p50_ms']} / {part['p95_ms']}" + (f"; {cpu}" if cpu is not None else ""),
        goal if last and judged in r else "",
        _met(r[judged]) if last and judged in r else "",
    )
    multi = m.get("multi_hop")
    if multi is None:
        return
    yield (
        name,
        f"multi_hop (2 hops) p50 / p95 ms, {int(facts):,} facts; hops alone",
        f"{multi['p50_ms']} / {multi['p95_ms']}; "
        f"{multi['hops']['p50_ms']} / {multi['hops']['p95_ms']}",
        "",
        "",
    )
    if last and ratio in r:
        yield (
            name,
            f"multi_hop p95 / single p95, {int(facts):,} facts (2 hops)",
            str(r[ratio]),
            "<= 3",
            _met(r[ratio.replace("ratio", "met")]),
        )
    if "outside_hops" in multi:
        yield (
            name,
            f"multi_hop outside the hops p50 / p95 ms, {int(facts):,} facts; LM plans; "
            "2-hop chains",
            f"{multi['outside_hops']['p50_ms']} / {multi['outside_hops']['p95_ms']}; "
            f"{multi['lm_plans']}; {multi['two_hop_chains']} of {multi['count']}",
            "",
            "",
        )


def _embed(r: dict[str, Any]) -> Iterator[Row]:
    for key, m in r["runtimes"].items():
        runtime, threads, question_threads, *spin = key.split("/")
        default = key == r["default"]
        q = m["question"]
        how = {"spin": ", spinning", "sleep": ""}[spin[0]] if spin else ""
        yield (
            "7 embedding runtimes",
            f"{runtime}, threads {threads} (batch) / {question_threads}{how} (one text)"
            f"{', the default' if default else ''}: one question p50 / p95 ms; "
            f"{m['batch_texts']} documents in one batch, texts/s",
            f"{q['p50_ms']} / {q['p95_ms']}; {m['batch_texts_per_s']}",
            "p95 <= 5" if default else "",
            _met(r["met"]) if default else "",
        )


def _million(r: dict[str, Any]) -> Iterator[Row]:
    yield from _ask(r, "3 ask, 1M facts", "retrieve", "p95 <= 50")
    rss = r["weaviate_rss_mib"]
    yield (
        "3 ask, 1M facts",
        "Weaviate RSS empty / loaded, data on disk (MiB)",
        f"{rss['empty']} / {rss['loaded']}, {r['weaviate_data_mib']}",
        "",
        "",
    )


def _e2e(r: dict[str, Any]) -> Iterator[Row]:
    edit, ask = r["edit"], r["ask"]
    name = f"4 end to end, {r['model']}"
    yield name, f"docs/s ({edit['documents']} documents)", str(edit["docs_per_s"]), "none", "-"
    yield (
        name,
        "ask with generation p50 / p95 ms",
        f"{ask['p50_ms']} / {ask['p95_ms']}",
        "none",
        "-",
    )


def _backlog(r: dict[str, Any]) -> Iterator[Row]:
    name = "5 backlog drain, zero-latency LM"
    yield (
        name,
        f"{r['documents']:,} documents: seconds (docs/s)",
        f"{r['drain_s']} ({r['docs_per_s']})",
        "none",
        "-",
    )
    yield name, "steady docs/s (lag 90% -> 10%)", str(r["steady_docs_per_s"]), "none", "-"


def _busy(r: dict[str, Any]) -> Iterator[Row]:
    name = f"6 one busy namespace, LM {r['lm_latency_ms']:g} ms/call"
    checked, goal_w = r["goals"], str(GOAL_W)
    if not r["window_applied"]:
        yield name, "window setting in the worker", "absent: every run is serial", "", "-"
    yield (
        name,
        f"embedding-only bound, docs/s ({r['embed_bound']['texts']} texts)",
        str(r["embed_bound"]["docs_per_s"]),
        "",
        "",
    )
    for window, f in r["runs"].items():
        at_goal = window == goal_w
        yield (
            name,
            f"W={window}, {f['documents']} docs: docs/s / bound; LM calls/doc; conflicts/doc"
            + (" (early, at commit)" if "redecisions_at" in f else ""),
            f"{f['docs_per_s']} / {f['bound_docs_per_s']} = {f['bound_share']}; "
            f"{f['lm_calls_per_doc']}; {f['conflict_rate']}{_at(f)}",
            f">= {GOAL_BOUND_SHARE}" if at_goal else "",
            _met(checked["bound_share_met"]) if at_goal else "",
        )
    yield from _dependencies(name, r)
    if checked["speedup_w16_over_w1"] is not None:
        yield (
            name,
            f"docs/s W={GOAL_W} / W=1",
            str(checked["speedup_w16_over_w1"]),
            _speedup_goal(checked),
            _met(checked["speedup_met"]),
        )
    yield (
        name,
        "re-decision tokens / all LM tokens"
        + (", or LM tokens / W=1's - 1" if _extra(r) else "")
        + " (most of any W)",
        str(checked["max_redecision_token_share"]),
        f"< {GOAL_REDECISION_SHARE:g}",
        _met(checked["redecision_met"]),
    )
    same = all(f["changelog_equals_serial"] for f in r["runs"].values())
    yield name, f"changelog at every W = W={r['serial_window']}'s", "yes" if same else "no", "", ""


def _dependencies(name: str, r: dict[str, Any]) -> Iterator[Row]:
    """Predicted dependencies, where the run has them: per W the documents that waited for
    an earlier one and the chain bound; the other policies at the goal's window."""
    policy = r.get("dependencies")
    for window, f in r["runs"].items():
        waited = f.get("waited")
        if waited is None or window == str(r["serial_window"]):
            continue
        yield (
            name,
            f"W={window} ({policy}): documents that waited for an earlier one; chain bound docs/s",
            f"{waited['waited_share']}; {waited['chain_bound_docs_per_s']}",
            "",
            "",
        )
    for other, f in r.get(f"other_policies_w{GOAL_W}", {}).items():
        yield (
            name,
            f"W={GOAL_W} ({other}): docs/s (x W=1); LM tokens / W=1's - 1; conflicts/doc{_at(f)}",
            f"{f['docs_per_s']} ({f['speedup_over_serial']}); {f['extra_token_share']}; "
            f"{f['conflict_rate']}",
            "",
            "",
        )


def _scale(r: dict[str, Any]) -> Iterator[Row]:
    name = f"8 scale-out, LM {r['lm_latency_ms']:g} ms/call, {r['partitions']} partitions"
    if "editor_window" in r:
        name += f", {r['namespaces']} namespaces, window {r['editor_window']}"
        if r.get("placement") == "balanced":
            name += ", namespaces placed evenly"
        placed = r.get("placement") == "planned"
        if placed:
            name += ", placement map planned"
        spread = " / ".join(str(d) for d in r["documents_per_partition"])
        how = "placement map" if placed else "namespace key"
        yield name, f"timed documents per partition (by {how})", spread, "", ""
        if placed and (hashed := r.get("documents_per_partition_hashed")):
            spread = " / ".join(str(d) for d in hashed)
            yield name, "the same, had the namespace keys been hashed", spread, "", ""
    for n, f in r["runs"].items():
        if "per_worker" in f:
            yield from _scale_run(name, n, f)
            continue
        measure = f"{n} worker(s), {f['documents']} docs: docs/s (s); LM calls, most at once"
        value = f"{f['docs_per_s']} ({f['seconds']}); {f['lm_calls']}, {f['max_lm_in_flight']}"
        if shares := " / ".join(str(d) for d in f.get("documents_per_worker", [])):
            measure, value = f"{measure}; docs per worker", f"{value}; {shares}"
        yield name, measure, value, "", ""
    eff = r["efficiency"]
    labels = (
        ("overall", "overall"),
        ("LM bound, per added worker", "lm_bound_per_added_worker"),
        ("per added worker", "per_added_worker"),
    )
    for label, key in labels:
        if key not in eff:
            continue
        values = ", ".join(f"{n}: {v}" for n, v in eff[key].items() if n != "1")
        per_added = key == "per_added_worker"
        goal = f">= {r['goal_per_added_worker']:g}" if per_added else ""
        yield name, f"scaling efficiency, {label}", values, goal, _met(r["met"]) if goal else ""


def _scale_run(name: str, n: str, f: dict[str, Any]) -> Iterator[Row]:
    """One worker count's rows: rate and bound; each worker's share; CPU."""
    yield (
        name,
        f"{n} worker(s), {f['documents']} docs: docs/s (s); LM bound docs/s (share of it); "
        "LM calls, most at once; rebalances timed",
        f"{f['docs_per_s']} ({f['seconds']}); {f['lm_bound_docs_per_s']} "
        f"({f['share_of_lm_bound']}); {f['lm_calls']}, {f['max_lm_in_flight']}; "
        f"{f['rebalances_in_timed_stretch']}",
        "",
        "",
    )
    workers = "; ".join(
        f"{w['documents']} ({w['docs_per_s']}) p{','.join(str(p) for p in w['partitions'])} "
        f"{w['lm_mean_in_flight']}, {w['lm_slot_wait_s_per_call']}"
        for w in f["per_worker"]
    )
    yield (
        name,
        f"{n} worker(s), per worker: docs (docs/s) partitions, LM calls in flight (mean), "
        "wait for an LM slot (s/call)",
        workers,
        "",
        "",
    )
    cpu = dict(f["cpu_s"])
    machine, capacity = cpu.pop("machine (all processes)"), cpu.pop("machine capacity")
    workers_s = sum(v for k, v in cpu.items() if k.startswith("worker"))
    others = ", ".join(f"{k} {v}" for k, v in cpu.items() if not k.startswith("worker"))
    yield (
        name,
        f"{n} worker(s), CPU seconds: workers, others; the machine's busy / capacity",
        f"{round(workers_s, 1)}, {others}; {machine} / {capacity}",
        "",
        "",
    )


def _extra(r: dict[str, Any]) -> bool:
    """Whether the run measured LM tokens over the serial run's."""
    return any("extra_token_share" in f for f in r["runs"].values())


def _at(f: dict[str, Any]) -> str:
    """A run's re-decisions made early and at commit, where the run counted them."""
    at = f.get("redecisions_at")
    return f" ({at.get('early', 0)}, {at.get('commit', 0)})" if at else ""


def _speedup_goal(checked: dict[str, Any]) -> str:
    """The W=16 over W=1 goal as the table prints it (results before issue 39: 8x)."""
    goal = checked.get("speedup_goal", GOAL_SPEEDUP)
    return "none at this latency" if goal is None else f">= {goal:g}"


def busy_goals(r: dict[str, Any]) -> str:
    """The busy benchmark's goals, one line each, as the run prints them."""
    if "error" in r:
        return f"busy failed: {r['error']}"
    g = r["goals"]
    lines = [
        f"goal: W={GOAL_W} docs/s over W=1 {_speedup_goal(g)}"
        f"{'' if g.get('speedup_goal', GOAL_SPEEDUP) is None else 'x'}: "
        f"{g['speedup_w16_over_w1']} ({_met(g['speedup_met'])})",
        f"goal: W={GOAL_W} docs/s >= {GOAL_BOUND_SHARE} of its bound: "
        f"{g['bound_share_w16']} ({_met(g['bound_share_met'])})",
        f"goal: re-decisions cost < {GOAL_REDECISION_SHARE:.0%} extra LM tokens: "
        f"{g['max_redecision_token_share']} ({_met(g['redecision_met'])})",
    ]
    if not r["window_applied"]:
        lines.append("the worker has no window setting yet: every W ran serially")
    return "\n".join(lines)


def rows(report: dict[str, Any]) -> list[Row]:
    """The table rows of every benchmark in the report."""
    found = report["benchmarks"]
    makers = {
        "throughput": _throughput,
        "tokens": _tokens,
        "ask": lambda r: _ask(r, "3 ask, no generation", "total", "p95 <= 25"),
        "ask_1m": _million,
        "e2e": _e2e,
        "backlog": _backlog,
        "busy": _busy,
        "embed": _embed,
        "scale": _scale,
    }
    out: list[Row] = []
    for name, result in found.items():
        if "error" in result:
            out.append((name, "failed", result["error"][:60], "", "NO"))
        elif name in makers:
            out += makers[name](result)
    return out


def title(report: dict[str, Any]) -> str:
    """What the table is of: the run's timestamp, size and commit."""
    return f"factstream bench {report['timestamp']} ({report['size']}, {report['commit']})"


def markdown(report: dict[str, Any]) -> str:
    """The table as Markdown (what docs/benchmarks.md quotes), headed by the commit its
    figures come from."""
    lines = [
        f"Figures from commit {report.get('commit', 'unknown')}, run {report.get('timestamp')}:",
        "",
    ]
    lines += ["| benchmark | measure | value | goal | met |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows(report)]
    return "\n".join(lines) + "\n"


def load(path: Path) -> dict[str, Any]:
    """A results file."""
    report: dict[str, Any] = orjson.loads(path.read_bytes())
    return report


def table(report: dict[str, Any]) -> Table:
    """The report as a rich table."""
    out = Table(
        "benchmark",
        "measure",
        "value",
        "goal",
        "met",
        title=title(report),
    )
    for row in rows(report):
        out.add_row(*row)
    return out


def main() -> None:
    """`python -m bench.report [FILE]`: a results file's table as Markdown (default: newest)."""
    import sys  # noqa: PLC0415 - only as a script

    paths = [Path(a) for a in sys.argv[1:]] or sorted(RESULTS.glob("*.json"))[-1:]
    if not paths:
        raise SystemExit(f"no results under {RESULTS}")
    print(markdown(load(paths[0])), end="")  # noqa: T201 - the script's output


if __name__ == "__main__":
    main()
