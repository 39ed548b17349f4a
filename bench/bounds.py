"""The busy-namespace benchmark's bound and goals (issue 18).

A window of W documents in flight, each making ``calls`` LM calls of ``latency_s`` one after
another, finishes at most W / (calls x latency) documents a second; nor can it pass the
embedding-only bound (every text the pipeline embeds, in one batched call).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "GOAL_BOUND_SHARE",
    "GOAL_REDECISION_SHARE",
    "GOAL_SPEEDUP",
    "GOAL_W",
    "bound",
    "goals",
    "speedup_goal",
]

GOAL_W = 16  # the window the goals are checked at
GOAL_SPEEDUP = 8.0  # documents/s at W=16 over W=1, at least (LM calls of 2 s and longer)
GOAL_SPEEDUP_FAST_CALLS = 6.0  # the same with LM calls of 500 ms and shorter (issue 39)
_FAST_CALL_S, _SLOW_CALL_S = 0.5, 2.0
GOAL_BOUND_SHARE = 0.7  # documents/s at W=16 over its bound, at least
GOAL_REDECISION_SHARE = 0.10  # re-decision tokens over all LM tokens, and LM tokens over
# the serial run's less one, under (every W)


def lm_bound(window: int, calls_per_doc: float, latency_s: float) -> float:
    """Documents/s of ``window`` documents at once, each ``calls_per_doc`` calls in a row."""
    if calls_per_doc <= 0 or latency_s <= 0:
        return float("inf")
    return window / (calls_per_doc * latency_s)


def bound(window: int, calls_per_doc: float, latency_s: float, embed_bound: float) -> float:
    """min(W / (LM calls per document x latency), the embedding-only bound)."""
    return min(lm_bound(window, calls_per_doc, latency_s), embed_bound)


def speedup_goal(latency_s: float) -> float | None:
    """Issue 39's W=16 over W=1 goal at LM calls of ``latency_s``: 6x at 500 ms a call (and
    shorter), 8x at 2 s (and longer); None between, where the issue sets none."""
    if latency_s <= _FAST_CALL_S:
        return GOAL_SPEEDUP_FAST_CALLS
    if latency_s >= _SLOW_CALL_S:
        return GOAL_SPEEDUP
    return None


def goals(runs: Mapping[int, Mapping[str, Any]], latency_s: float) -> dict[str, Any]:
    """The issue's goals on the runs by window, with LM calls of ``latency_s``: each figure,
    and whether it is met (None: not measured, e.g. no W=1 or W=16 run, or no goal set)."""
    serial, at_goal = runs.get(1), runs.get(GOAL_W)
    speedup = share = None
    if serial is not None and at_goal is not None and serial["docs_per_s"] > 0:
        speedup = round(at_goal["docs_per_s"] / serial["docs_per_s"], 2)
    if at_goal is not None:
        share = at_goal["bound_share"]
    # Both ways of counting what re-decisions cost: the tokens the worker counts on its
    # re-decisions, and every token the LM served over the serial run's (cancelled work too).
    redecision = max(
        (max(r["redecision_token_share"], r.get("extra_token_share", 0.0)) for r in runs.values()),
        default=None,
    )
    goal = speedup_goal(latency_s)
    return {
        "speedup_w16_over_w1": speedup,
        "speedup_goal": goal,
        "speedup_met": None if speedup is None or goal is None else speedup >= goal,
        "bound_share_w16": share,
        "bound_share_met": None if share is None else share >= GOAL_BOUND_SHARE,
        "max_redecision_token_share": redecision,
        "redecision_met": None if redecision is None else redecision < GOAL_REDECISION_SHARE,
    }
