"""The demo's first-run wall time by phase and issue 36's goals in its results file."""

from __future__ import annotations

from typing import Any

import pytest

from factstream_lab.demo.phases import (
    STARTED_ENV,
    Phases,
    first_run_lines,
    goal_figures,
    lm_format_dead_letters,
    make_started,
)
from factstream_lab.stack.progress import Outcome, StepTiming

T0 = 1_795_000_000.0
STEPS = (
    StepTiming("lm", "build the LM server", Outcome.BUILT, 301.04),
    StepTiming("kafka", "resolve Kafka jars", Outcome.CACHED, None),
)


def test_make_started_is_read_from_makes_stamp() -> None:
    assert make_started({}) is None
    assert make_started({STARTED_ENV: "1795000000"}) == T0
    with pytest.raises(ValueError, match="FACTSTREAM_DEMO_STARTED='soon' is not seconds"):
        make_started({STARTED_ENV: "soon"})


def test_phases_from_make_time_the_whole_run() -> None:
    phases = Phases(T0, T0 + 120, T0 + 600, T0 + 1500, STEPS).to_json()
    assert phases["began_with"] == "make demo"
    assert (phases["setup_s"], phases["services_s"], phases["editing_s"]) == (120, 480, 900)
    assert phases["total_s"] == 1500 and phases["total_under_goal"] is False
    assert phases["provisioning_steps"] == [
        {"service": "lm", "step": "build the LM server", "outcome": "built", "seconds": 301.0},
        {"service": "kafka", "step": "resolve Kafka jars", "outcome": "cached", "seconds": None},
    ]


def test_phases_without_make_start_at_the_demo_command() -> None:
    phases = Phases(None, T0, T0 + 60, T0 + 660).to_json()
    assert phases["began_with"] == "factstream demo" and phases["setup_s"] is None
    assert phases["total_s"] == 660 and phases["total_under_goal"] is True


def figures(causes: dict[str, int], share: float | None, tokens: float | None) -> dict[str, Any]:
    first_run = Phases(T0, T0 + 100, T0 + 500, T0 + 1100, STEPS).to_json()
    lm = {"invalid_share": share, "completion_tokens_per_document": tokens}
    return {"worker_lm": lm, "dead_letter_causes": causes, "first_run": first_run}


def test_goals_are_judged_from_the_runs_own_figures() -> None:
    causes = {"LM output invalid (extract_facts.v2)": 2, "bad input: value is not valid JSON": 1}
    assert lm_format_dead_letters(causes) == 2
    goals = goal_figures(figures(causes, 0.05, 300.0))
    assert goals["lm_format_dead_letters"] == {"value": 2, "goal": 0, "met": False}
    assert goals["invalid_output_share"]["met"] is False
    assert goals["generated_tokens_per_document"] == {"value": 300.0, "goal": 234.5, "met": False}
    assert goals["first_run_s"]["value"] == 1100 and goals["first_run_s"]["met"] is True
    good = goal_figures(figures({"bad input: x": 1}, 0.0, 190.0))
    assert all(goal["met"] for goal in good.values())
    unknown = goal_figures(figures({}, None, None))
    assert unknown["invalid_output_share"]["met"] is None


def test_the_screen_says_each_phase_and_goal() -> None:
    data = figures({}, 0.01, 200.0)
    lines = first_run_lines(data["first_run"], goal_figures(data))
    assert lines[0].startswith("Wall time from make demo: setup 1.7 min, services 6.7 min")
    assert "total 18.3 min (goal under 20 min)" in lines[0]
    assert lines[1] == "  provisioning (concurrent): lm build the LM server 301 s"
    assert "first_run_s 1100.0 (met, goal 1200)" in lines[2]
