"""What `eval clark` and `eval convo` write: LM tokens from metrics, results JSON, the plot."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson
from prometheus_client.metrics_core import Metric

__all__ = ["latest_results", "plot_accuracy", "tokens_by_task", "total_tokens", "write_results"]

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
    path.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2))
    return path


def latest_results(out: Path, kind: str = "clark") -> dict[str, dict[str, Any]]:
    """The newest finished results per method among ``out/<kind>-*.json``."""
    latest: dict[str, dict[str, Any]] = {}
    for path in sorted(out.glob(f"{kind}-*.json")):  # names sort by start time
        data = orjson.loads(path.read_bytes())
        if isinstance(data, dict) and data.get("kind") == kind and "method" in data:
            latest[str(data["method"])] = data
    return latest


def plot_accuracy(
    results: Mapping[str, Mapping[str, Any]], path: Path, title: str = "CLARK-News"
) -> Path:
    """A PNG of accuracy over the checkpoints, one line per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for method, data in sorted(results.items()):
        points = [cp for cp in data["checkpoints"] if cp["asked"]]
        xs = [100 * float(cp["share"]) for cp in points]
        ys = [100 * float(cp["accuracy"]) for cp in points]
        ax.plot(xs, ys, marker="o", label=f"{method} ({data['lm']['model']})")
    ax.set_xlabel("answer changes revealed (%)")
    ax.set_ylabel("exact match (%)")
    ax.set_ylim(0, 100)
    ax.set_xticks([20, 40, 60, 80, 100])
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title(f"{title}: accuracy at each checkpoint")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
