"""The LoCoMo results as a table and a plot: evidence recall and time resolved per category,
and with answers (--lm) their token F1 and the judge's accuracy."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.table import Table

from factstream_lab.eval.report import bar_figure

__all__ = ["plot_locomo", "table_locomo"]

_CATEGORIES = ("1", "2", "3", "4", "5")


def _label(name: str, row: Mapping[str, Any]) -> str:
    return f"{name}: {row['with_evidence']} q"


def plot_locomo(results: Mapping[str, Any], path: Path) -> Path:
    """Grouped bars per category (questions with evidence in brackets): recall@5 and @10
    per knowledge base; time resolved in the title."""
    kbs: Mapping[str, Any] = results["kbs"]
    first = next(iter(kbs.values()))["categories"]
    labels = [_label(c, first[c]) for c in _CATEGORIES]
    series: dict[str, list[float]] = {}
    for kb, data in kbs.items():
        rows = data["categories"]
        for k in (5, 10):
            series[f"{kb} recall@{k}"] = [
                float(rows[c][f"evidence_recall_at_{k}"] or 0.0) for c in _CATEGORIES
            ]
        scored = data.get("answers")
        if scored is not None:  # F1 (5: abstained), then the judge where it judged
            series[f"{kb} answer F1"] = [
                float(scored[c].get("f1", scored[c].get("abstained")) or 0.0) for c in _CATEGORIES
            ]
            if any(scored[c]["judged"] for c in _CATEGORIES):
                series[f"{kb} judge"] = [
                    float(scored[c]["judge_accuracy"] or 0.0) for c in _CATEGORIES
                ]
    times = ", ".join(
        f"{kb} {_pct(data['categories']['2'].get('time_resolved'))}" for kb, data in kbs.items()
    )
    title = (
        f"LoCoMo {', '.join(results['conversations'])}: evidence recall, single mode\n"
        f"temporal time resolved: {times}\n"
        "1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial"
    )

    return bar_figure(path, title, labels, series)


def table_locomo(results: Mapping[str, Any]) -> Table:
    """One row per knowledge base and category (with answers: F1, or for 5 the share that
    abstained, and the judge's accuracy)."""
    table = Table(
        "kb",
        "category",
        "questions",
        "recall@5",
        "recall@10",
        "multi_hop @10",
        "time",
        "answer F1",
        "judge",
    )
    for kb, data in results["kbs"].items():
        scored = data.get("answers") or {}
        for name, row in data["categories"].items():
            time = row.get("time_resolved")
            answered = scored.get("1-4" if name == "all" else name, {})
            f1 = answered.get("f1", answered.get("abstained"))
            table.add_row(
                kb,
                f"{name} {row['name']}" if name != "all" else "all",
                str(row["with_evidence"]),
                _pct(row["evidence_recall_at_5"]),
                _pct(row["evidence_recall_at_10"]),
                _pct(row["modes"]["multi_hop"]["at_10"]),
                _pct(time) if name == "2" else "",
                _pct(f1) if answered else "",
                _pct(answered.get("judge_accuracy")) if answered else "",
            )
    return table


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"
