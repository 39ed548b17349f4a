"""Evaluation results files as the Markdown tables docs/evaluation.md quotes.

A quoted table sits between ``<!-- eval-table:start KIND: FILE [FILE ...] -->`` and
``<!-- eval-table:end -->``; ``tests/unit/test_readme.py`` keeps it equal to what this
module renders from the named files. ``python -m factstream_lab.eval.tables KIND FILE ...``
prints one (kinds: the keys of ``RENDERERS``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "RENDERERS",
    "clark_markdown",
    "floor_markdown",
    "locomo_markdown",
    "multihop_lm_markdown",
    "multihop_markdown",
    "render",
    "subject_check_markdown",
    "temporal_lm_markdown",
    "temporal_markdown",
    "update_retrieval_default_markdown",
    "update_retrieval_markdown",
]


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _row(cells: Sequence[object]) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    return [_row(header), _row(["---"] * len(header)), *(_row(r) for r in rows)]


def floor_markdown(reports: Sequence[Mapping[str, Any]]) -> str:
    """``factstream eval floor --json`` output: stale and unrelated pairs kept per floor."""
    [report] = reports
    lines = [
        f"{report['pairs']:,} superseded facts; {report['unrelated_pairs']:,} unrelated pairs.",
        "",
        *_table(
            ["floor", "stale facts kept", "unrelated pairs kept"],
            [(f"{floor:.2f}", _pct(stale), _pct(other)) for floor, stale, other in report["rows"]],
        ),
    ]
    return "\n".join(lines) + "\n"


def update_retrieval_markdown(reports: Sequence[Any]) -> str:
    """``factstream eval update-retrieval --json`` outputs (one or more runs).

    A configuration that several runs scored (dense only, in every run) is shown once, from
    the first file that has it. Runs that timed retrieval add its mean and p95 per document;
    rows of older runs, without recall@1's ceiling, show "-" there.
    """
    rows: dict[str, Mapping[str, Any]] = {}
    for run in reports:
        for result in run:
            rows.setdefault(result["config"]["name"], result)
    first = next(iter(rows.values()))
    config = first["config"]
    ks = sorted(first["recall_at"], key=int)
    timed = "ms_mean" in first
    shown = "shown_mean" in first  # facts the editor shows per document, in newer runs
    at_n = "recall_at_n" in first  # first among its document's changes, in newer runs
    ceiling = "ceiling_at_1" in first  # the best recall@1 possible, in newer runs
    header = [
        "retrieval",
        *(f"recall@{k}" for k in ks),
        *(["ceiling@1", "documents first"] if ceiling else []),
        *(["first of n"] if at_n else []),
        "editor sees",
    ]
    lines = [
        f"{first['changes']} superseded facts in the KB when superseded "
        f"({first['not_in_kb']} more come later in the stream); "
        f"floor {config['min_similarity']}, top_k {config['top_k']}"
        + (f"; KB: {first['kb']}." if "kb" in first else "."),
        "",
        *_table(
            [*header, *(["shown"] if shown else []), "ms mean / p95"]
            if timed
            else [*header[:-1], "above floor", header[-1]],
            [
                (
                    name,
                    *(_pct(r["recall_at"][k]) for k in ks),
                    *(
                        (_pct(r.get("ceiling_at_1")), _pct(r.get("documents_first")))
                        if ceiling
                        else ()
                    ),
                    *((_pct(r["recall_at_n"]),) if at_n else ()),
                    *(() if timed else (_pct(r["above_floor"]),)),
                    _pct(r["editor_recall"]),
                    *((f"{r['shown_mean']:.1f}",) if shown else ()),
                    *((f"{r['ms_mean']:.0f} / {r['ms_p95']:.0f}",) if timed else ()),
                )
                for name, r in rows.items()
            ],
        ),
    ]
    return "\n".join(lines) + "\n"


def update_retrieval_default_markdown(reports: Sequence[Any]) -> str:
    """The configured retrieval (each run's first row) against the plain search, per run.

    The README's summary of ``update_retrieval_markdown``; "before" is the row whose name
    says so ("(before)" or "(before issue 20)"). Runs that record their data folder (newer
    ones) add it, and recall@1's ceiling and "first of n" where they have them.
    """
    first = reports[0][0]
    data = all("data" in run[0] for run in reports)
    extra = all("ceiling_at_1" in run[0] for run in reports)
    rows = []
    for run in reports:
        before = [r for r in run if "(before" in r["config"]["name"]]
        for result in [run[0], *before]:
            rows.append(
                (
                    *((result["data"],) if data else ()),
                    result.get("kb", "stream"),
                    result["config"]["name"],
                    *(_pct(result["recall_at"][k]) for k in sorted(result["recall_at"], key=int)),
                    *((_pct(result["ceiling_at_1"]), _pct(result["recall_at_n"])) if extra else ()),
                    _pct(result["editor_recall"]),
                    f"{result['ms_mean']:.0f} / {result['ms_p95']:.0f}",
                )
            )
    ks = sorted(first["recall_at"], key=int)
    header = [
        *(["data"] if data else []),
        "KB",
        "retrieval",
        *(f"recall@{k}" for k in ks),
        *(["ceiling@1", "first of n"] if extra else []),
        "editor sees",
        "ms mean / p95",
    ]
    return "\n".join(_table(header, rows)) + "\n"


def _tokens(phase: Mapping[str, Mapping[str, int]]) -> int:
    return sum(sum(kinds.values()) for kinds in phase.values())


def clark_markdown(results: Sequence[Mapping[str, Any]]) -> str:
    """``factstream eval clark`` (or ``eval convo``) results files, one row per method."""
    first = results[0]
    shares = [cp["share"] for cp in first["checkpoints"]]
    rows = []
    for r in results:
        by_share = {cp["share"]: cp["accuracy"] for cp in r["checkpoints"]}
        updates = r["per_updates"]
        rows.append(
            (
                r["method"],
                *(_pct(by_share.get(share)) for share in shares),
                _pct(r["accuracy"]),
                " / ".join(
                    f"{100 * updates[k]:.1f}" if k in updates else "-" for k in ("0", "1", "2+")
                )
                + "%",
                f"{_tokens(r['tokens']['ingest']):,} + {_tokens(r['tokens']['ask']):,}",
            )
        )
    lines = [
        f"{first['documents']} documents, {first['asked']} questions asked per method, "
        f"LM {first['lm']['model']}.",
        "",
        *_table(
            [
                "method",
                *(f"{share:.0%}" for share in shares),
                "all",
                "0 / 1 / 2+ updates",
                "LM tokens (ingest + ask)",
            ],
            rows,
        ),
    ]
    return "\n".join(lines) + "\n"


def temporal_markdown(reports: Sequence[Mapping[str, Any]]) -> str:
    """``factstream eval temporal`` output: the gold fact ranked first, per mode and position."""
    [report] = reports
    positions = [p for p in report["questions"] if p != "all"]
    rows = [
        (
            score["mode"]["name"],
            f"{score['first']} of {score['questions']} ({score['accuracy']:.3f})",
            f"{score['recall_at_k']:.3f}",
            *(f"{score['by_position'][p]['accuracy']:.3f}" for p in positions),
        )
        for score in report["scores"]
    ]
    top_k = report["retrieval"]["top_k"]
    return "\n".join(_table(["mode", "ranked first", f"in top {top_k}", *positions], rows)) + "\n"


def temporal_lm_markdown(results: Sequence[Mapping[str, Any]]) -> str:
    """``factstream eval temporal --lm`` results files, one row per method."""
    first = results[0]
    groups = list(first["by_group"])
    rows = [
        (
            r["method"],
            *(
                f"{g['correct']}/{g['asked']} ({_pct(g['accuracy'])})"
                for g in (r["by_group"][name] for name in groups)
            ),
            _pct(r["chance"]),
            f"{r['tokens']['total']:,}",
            f"{r['seconds']['ask']:,.0f}",
        )
        for r in results
    ]
    lines = [
        f"{first['asked']} questions per method, LM {first['lm']['model']}, "
        f"embeddings {first['embed_model']}.",
        "",
        *_table(["method", *groups, "chance", "LM tokens", "ask seconds"], rows),
    ]
    return "\n".join(lines) + "\n"


def multihop_markdown(reports: Sequence[Mapping[str, Any]]) -> str:
    """``factstream eval multihop`` reports (one row per KB and question length and hop)."""
    rows = []
    for r in reports:
        plain = {s["hop"]: s for s in r["hops_without_index"]}
        for group, scores in r["by_question_hops"].items():
            for s in scores:
                rows.append(
                    (
                        r["kb"],
                        group,
                        s["hop"],
                        s["cases"],
                        _pct(s["recall_at_1"]),
                        _pct(s["recall_at_k"]),
                    )
                )
        rows.append((r["kb"], "all", "chain end", r["cases"], _pct(r["chain_correct"]), ""))
        rows.append(
            (r["kb"], "all", "no index, hop 2", r["cases"], _pct(plain[2]["recall_at_1"]), "")
        )
        top = r["retrieval"]["top_k"]
        single = _pct(r["single_last_hop_in_top_k"])
        rows.append((r["kb"], "all", f"single read, last hop in top {top}", r["cases"], "", single))
    first = reports[0]
    lines = [
        f"Hop k = {first['hop_top_k']} facts kept per hop; embeddings {first['embed_model']}.",
        "",
        *_table(["KB", "questions", "hop", "cases", "recall@1", "recall@k"], rows),
    ]
    return "\n".join(lines) + "\n"


def multihop_lm_markdown(results: Sequence[Mapping[str, Any]]) -> str:
    """``factstream eval multihop --lm`` results: one row per mode."""
    [r] = results
    rows = [
        (
            mode,
            f"{m['correct']}/{m['asked']} ({_pct(m['accuracy'])})",
            f"{m['second_rounds']} ({_pct(m['second_round_share'])})",
            m["answered_multi_hop"],
            f"{m['seconds_mean']:.1f}",
        )
        for mode, m in r["modes"].items()
    ]
    lines = [
        f"{r['cases']} cases, LM {r['lm']['model']}, chance {_pct(r['chance'])}, "
        f"{r['tokens']['total']:,} LM tokens.",
        "",
        *_table(["mode", "exact match", "second rounds", "went multi-hop", "s/answer"], rows),
    ]
    return "\n".join(lines) + "\n"


def locomo_markdown(results: Sequence[Mapping[str, Any]]) -> str:
    """``factstream eval locomo`` results: one row per knowledge base and category."""
    [r] = results
    rows = []
    for kb, data in r["kbs"].items():
        for name, c in data["categories"].items():
            time = ""
            if name == "2":
                t = c["time"]
                time = f"{t['resolved']}/{t['gold_readable']} ({_pct(c['time_resolved'])})"
            rows.append(
                (
                    kb,
                    name if name == "all" else f"{name} {c['name']}",
                    c["with_evidence"],
                    _pct(c["evidence_recall_at_5"]),
                    _pct(c["evidence_recall_at_10"]),
                    _pct(c["modes"]["multi_hop"]["at_10"]),
                    time,
                )
            )
    sliced = r["slice"]
    lines = [
        f"Conversations {', '.join(r['conversations'])}: {sliced['questions']} questions, "
        f"sessions {sliced['sessions'] or 'all'}, documents {sliced['limit'] or 'all'}; "
        f"top {r['retrieval']['top_k']}, embeddings {r['embed_model'].split('/')[-1]}.",
        "",
        *_table(
            ["kb", "category", "with evidence", "recall@5", "recall@10", "multi_hop @10", "time"],
            rows,
        ),
    ]
    answered = _locomo_answers(r)
    if answered:
        model = r["answers"]["lm"]["model"]
        judge = r["answers"]["judge"]
        judged = f"judge {judge['model']} ({judge['prompt']})" if judge else "no judge"
        lines += [
            "",
            f"Answers: LM {model}, {judged}; token F1 (category 5: the share that abstained).",
            "",
            *_table(
                ["kb", "category", "answered", "F1 / abstained", "judged", "judge", "failed"],
                answered,
            ),
        ]
    return "\n".join(lines) + "\n"


def _locomo_answers(r: Mapping[str, Any]) -> list[tuple[object, ...]]:
    """One row per knowledge base and category of the answers' scores (none without)."""
    rows: list[tuple[object, ...]] = []
    for kb, data in r["kbs"].items():
        for name, a in (data.get("answers") or {}).items():
            rows.append(
                (
                    kb,
                    name,
                    a["answered"],
                    _pct(a.get("f1", a.get("abstained"))),
                    a["judged"],
                    _pct(a["judge_accuracy"]),
                    a["failed"],
                )
            )
    return rows


def _counted(share: Mapping[str, Any]) -> str:
    if share["share"] is None:
        return "-"
    return f"{share['counted']:,} / {share['total']:,} ({share['share']:.1%})"


def subject_check_markdown(reports: Sequence[Mapping[str, Any]]) -> str:
    """``factstream eval subject-check --json`` output: one row per test, the rule last."""
    [report] = reports
    rows = [
        (
            f"`{v['name']}`",
            _counted(v["supersessions_passed"]),
            _counted(v["scored_passed"]),
            _counted(v["wrong_refused"]),
            _counted(v["demo_wrong_refused"]),
        )
        for v in report["variants"]
    ]
    header = [
        "test",
        "supersessions passed",
        "of those, stale fact in the KB",
        "wrong invalidations refused",
        "demo: wrong refused",
    ]
    lines = [
        f"{report['documents']} documents, {report['triples']} triples.",
        "",
        *_table(header, rows),
    ]
    return "\n".join(lines) + "\n"


RENDERERS: dict[str, Callable[[Sequence[Any]], str]] = {
    "floor": floor_markdown,
    "update-retrieval": update_retrieval_markdown,
    "update-retrieval-default": update_retrieval_default_markdown,
    "clark": clark_markdown,
    "convo": clark_markdown,  # the same runner's results, on a generated world
    "temporal": temporal_markdown,
    "temporal-lm": temporal_lm_markdown,
    "multihop": multihop_markdown,
    "multihop-lm": multihop_lm_markdown,
    "locomo": locomo_markdown,
    "subject-check": subject_check_markdown,
}


def render(kind: str, paths: Sequence[Path]) -> str:
    """The table of ``kind`` from the results files at ``paths``."""
    return RENDERERS[kind]([json.loads(path.read_text()) for path in paths])


if __name__ == "__main__":
    print(render(sys.argv[1], [Path(p) for p in sys.argv[2:]]), end="")
