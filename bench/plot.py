"""The backlog benchmark's consumer-lag plot (PNG, matplotlib without a display)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["plot_lag"]


def plot_lag(samples: list[tuple[float, int]], path: Path, title: str) -> None:
    """Lag (documents) over seconds since the worker started, written to ``path``."""
    import matplotlib  # noqa: PLC0415 - only the backlog benchmark plots

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    ax.plot([t for t, _ in samples], [lag for _, lag in samples], color="tab:blue")
    ax.set_xlabel("seconds since the worker started")
    ax.set_ylabel("consumer lag (documents)")
    ax.set_title(title)
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
