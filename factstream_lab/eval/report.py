"""What the LM evaluations write: token counts from metrics, the results JSON, the plots.

Used by `factstream eval clark` and `eval convo` (accuracy over checkpoints) and `factstream
eval temporal --lm` (exact match per method and question position).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
from prometheus_client.metrics_core import Metric

from factstream_lab.provenance import stamped

__all__ = [
    "bar_figure",
    "latest_results",
    "plot_accuracy",
    "plot_exact_match",
    "tokens_by_task",
    "total_tokens",
    "write_results",
]

# Spent now, and served from the response cache (as first spent): a rerun reports the same.
_TOKEN_SAMPLES = ("factstream_lm_tokens_total", "factstream_lm_cached_tokens_total")


def tokens_by_task(families: Iterable[Metric]) -> dict[str, dict[str, int]]:
    """LM tokens per task and kind (prompt, completion) from metric families."""
    found: dict[str, dict[str, int]] = defaultdict(lambda: {"prompt": 0, "completion": 0})
    for family in families:
        for sample in family.samples:
            if sample.name in _TOKEN_SAMPLES:
                task, kind = sample.labels["task"], sample.labels["kind"]
                found[task][kind] += int(sample.value)
    return dict(sorted(found.items()))


def total_tokens(tokens: Mapping[str, Mapping[str, int]]) -> int:
    """Every prompt and completion token of ``tokens_by_task``'s answer."""
    return sum(sum(kinds.values()) for kinds in tokens.values())


def write_results(out: Path, name: str, results: Mapping[str, Any]) -> Path:
    """Write ``out/<name>.json`` (indented, keys in insertion order); returns the path."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    path.write_bytes(orjson.dumps(stamped(dict(results)), option=orjson.OPT_INDENT_2))
    return path


def latest_results(out: Path, kind: str = "clark") -> dict[str, dict[str, Any]]:
    """The newest finished results per method among ``out/<kind>-*.json``."""
    latest: dict[str, dict[str, Any]] = {}
    for path in sorted(out.glob(f"{kind}-*.json")):  # names sort by start time
        data = orjson.loads(path.read_bytes())
        if isinstance(data, dict) and data.get("kind") == kind and "method" in data:
            latest[str(data["method"])] = data
    return latest


@contextmanager
def _figure(path: Path, title: str, ylabel: str) -> Iterator[Any]:
    """A matplotlib axes (headless) that is saved to ``path`` as a PNG on leaving."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    try:
        yield ax
        ax.set_ylabel(ylabel)
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
        if ax.get_legend() is None:
            ax.legend()
        ax.set_title(title)
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=120)
    finally:
        plt.close(fig)


def plot_accuracy(
    results: Mapping[str, Mapping[str, Any]], path: Path, title: str = "CLARK-News"
) -> Path:
    """A PNG of accuracy over the checkpoints, one line per method."""
    with _figure(path, f"{title}: accuracy at each checkpoint", "exact match (%)") as ax:
        for method, data in sorted(results.items()):
            points = [cp for cp in data["checkpoints"] if cp["asked"]]
            xs = [100 * float(cp["share"]) for cp in points]
            ys = [100 * float(cp["accuracy"]) for cp in points]
            ax.plot(xs, ys, marker="o", label=f"{method} ({data['lm']['model']})")
        ax.set_xlabel("answer changes revealed (%)")
        ax.set_xticks([20, 40, 60, 80, 100])
    return path


def plot_exact_match(
    results: Mapping[str, Mapping[str, Any]], path: Path, title: str, groups: list[str]
) -> Path:
    """A PNG of exact match per method (bars) in each of ``groups`` (``by_group`` keys, and
    "all"), with each method's chance level as a dashed line."""
    methods = sorted(results)
    width = 0.8 / max(1, len(methods))
    with _figure(path, title, "exact match (%)") as ax:
        for i, method in enumerate(methods):
            data = results[method]
            ys = [100 * float(data["by_group"][g]["accuracy"] or 0.0) for g in groups]
            xs = [j + (i - (len(methods) - 1) / 2) * width for j in range(len(groups))]
            ax.bar(xs, ys, width, label=f"{method} ({data['lm']['model']})")
        chance = [float(results[m]["chance"]) for m in methods if results[m]["chance"]]
        if chance:
            mean = 100 * sum(chance) / len(chance)
            ax.axhline(mean, linestyle="--", color="grey", label=f"chance ({mean:.0f}%)")
        ax.set_xticks(range(len(groups)), groups)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=3, fontsize="small")
    return path


def bar_figure(
    path: Path,
    title: str,
    labels: list[str],
    series: Mapping[str, list[float]],
    goal: float | None = None,
    chance: float | None = None,
) -> Path:
    """A PNG of grouped bars: one group per label, one bar per series (shares in [0, 1]),
    and the goal (or chance) as a dashed line."""
    width = 0.8 / max(1, len(series))
    with _figure(path, title, "%") as ax:
        for i, (name, values) in enumerate(series.items()):
            xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(labels))]
            ax.bar(xs, [100 * v for v in values], width, label=name)
        if goal is not None:
            ax.axhline(100 * goal, linestyle="--", color="grey", label=f"goal ({goal:.0%})")
        if chance is not None:
            ax.axhline(100 * chance, linestyle=":", color="grey", label=f"chance ({chance:.0%})")
        ax.set_xticks(range(len(labels)), labels)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=3, fontsize="small")
    return path
