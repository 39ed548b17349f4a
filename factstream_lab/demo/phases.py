"""The first run's wall time by phase, for the demo's results file (issue 36's goals).

``make demo`` stamps when it began (``FACTSTREAM_DEMO_STARTED``, seconds since the epoch,
taken when make reads the Makefile), so the venv's setup, which runs before any
factstream code, is timed too. The phases: ``setup`` (make's venv and pip install),
``services`` (provisioning, every step concurrently, then the starts), ``editing`` (the
40 documents, the mirror and the story), and ``total`` from make's start (or the demo
command's, run alone) to the results file. Each provisioning step's own time comes from
the progress display's record (:attr:`Progress.timings`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from factstream_lab.stack.progress import StepTiming

__all__ = [
    "FIRST_RUN_GOAL_S",
    "STARTED_ENV",
    "Phases",
    "first_run_lines",
    "goal_figures",
    "lm_format_dead_letters",
    "make_started",
]

STARTED_ENV = "FACTSTREAM_DEMO_STARTED"
FIRST_RUN_GOAL_S = 20 * 60  # issue 36: the whole first run under 20 minutes


def make_started(env: Mapping[str, str] | None = None) -> float | None:
    """When ``make demo`` began (its stamp), or None when the demo runs without it.

    Raises:
        ValueError: the stamp is not a number of seconds.
    """
    found = (os.environ if env is None else env).get(STARTED_ENV, "").strip()
    if not found:
        return None
    try:
        return float(found)
    except ValueError:
        raise ValueError(f"{STARTED_ENV}={found!r} is not seconds since the epoch") from None


def lm_format_dead_letters(causes: Mapping[str, int]) -> int:
    """Documents dead-lettered because the LM's output could not be read."""
    return sum(n for cause, n in causes.items() if cause.startswith("LM output invalid"))


@dataclass(frozen=True)
class Phases:
    """Wall-clock marks of one demo run (seconds since the epoch)."""

    make_started: float | None
    demo_started: float
    services_ready: float
    ended: float
    steps: tuple[StepTiming, ...] = ()

    def to_json(self) -> dict[str, Any]:
        began = self.make_started if self.make_started is not None else self.demo_started
        total = self.ended - began

        def stamp(seconds: float) -> str:
            return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds")

        return {
            "began": stamp(began),
            "began_with": "make demo" if self.make_started is not None else "factstream demo",
            "setup_s": None
            if self.make_started is None
            else round(self.demo_started - self.make_started, 1),
            "services_s": round(self.services_ready - self.demo_started, 1),
            "provisioning_steps": [s.to_json() for s in self.steps],
            "editing_s": round(self.ended - self.services_ready, 1),
            "total_s": round(total, 1),
            "total_under_goal": total < FIRST_RUN_GOAL_S,
        }


_TOKENS_BEFORE = 469  # generated tokens per document in the run issue 36 reported


def goal_figures(figures: Mapping[str, Any]) -> dict[str, Any]:
    """Issue 36's goals beside this run's figures (from the results file's own fields)."""
    lm = figures["worker_lm"]
    causes: Mapping[str, int] = figures["dead_letter_causes"]
    total = figures["first_run"]["total_s"]
    share, tokens = lm["invalid_share"], lm["completion_tokens_per_document"]
    return {
        "lm_format_dead_letters": {
            "value": lm_format_dead_letters(causes),
            "goal": 0,
            "met": lm_format_dead_letters(causes) == 0,
        },
        "invalid_output_share": {
            "value": share,
            "goal": 0.02,
            "met": None if share is None else share <= 0.02,
        },
        "generated_tokens_per_document": {
            "value": tokens,
            "goal": _TOKENS_BEFORE / 2,
            "met": None if tokens is None else tokens <= _TOKENS_BEFORE / 2,
        },
        "first_run_s": {
            "value": total,
            "goal": FIRST_RUN_GOAL_S,
            "met": total < FIRST_RUN_GOAL_S,
            "whole_run": figures["first_run"]["began_with"] == "make demo",
        },
    }


def _minutes(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds / 60:.1f} min"


def first_run_lines(first_run: Mapping[str, Any], goals: Mapping[str, Any]) -> list[str]:
    """The screen's account of the run's wall time and of issue 36's goals."""
    steps = [
        f"{s['service']} {s['step']} {s['seconds']:.0f} s"
        for s in first_run["provisioning_steps"]
        if s["seconds"] is not None
    ]
    lines = [
        f"Wall time from {first_run['began_with']}: setup {_minutes(first_run['setup_s'])}, "
        f"services {_minutes(first_run['services_s'])}, editing "
        f"{_minutes(first_run['editing_s'])}; total {_minutes(first_run['total_s'])} "
        f"(goal under {FIRST_RUN_GOAL_S // 60} min)",
    ]
    if steps:
        lines.append("  provisioning (concurrent): " + ", ".join(steps))
    met = ", ".join(
        f"{name} {goal['value']} ({'met' if goal['met'] else 'not met'}, goal {goal['goal']})"
        for name, goal in goals.items()
    )
    lines.append(f"Issue 36's goals: {met}")
    return lines
