"""The scale-out benchmark: scaling efficiency overall and per added worker; its table rows."""

from __future__ import annotations

from bench.report import rows
from bench.scale import efficiency


def test_linear_scaling_is_efficiency_one() -> None:
    scaling = efficiency({1: 2.0, 2: 4.0, 3: 6.0})
    assert scaling["overall"] == {"1": 1.0, "2": 1.0, "3": 1.0}
    assert scaling["per_added_worker"] == {"2": 1.0, "3": 1.0}


def test_a_worker_that_adds_little_shows_in_its_own_step() -> None:
    scaling = efficiency({1: 2.0, 2: 3.8, 3: 4.2})
    assert scaling["overall"] == {"1": 1.0, "2": 0.95, "3": 0.7}
    assert scaling["per_added_worker"] == {"2": 0.9, "3": 0.2}


def test_the_table_rows_name_each_run_and_the_goal_per_added_worker() -> None:
    run = {"documents": 120, "seconds": 60.0, "lm_calls": 300, "max_lm_in_flight": 2}
    result = {
        "lm_latency_ms": 500.0,
        "partitions": 8,
        "runs": {
            "1": {**run, "docs_per_s": 2.0, "documents_per_worker": [120]},
            "2": {**run, "docs_per_s": 3.0, "documents_per_worker": [64, 56]},
        },
        "efficiency": efficiency({1: 2.0, 2: 3.0}),
        "goal_per_added_worker": 0.8,
        "met": False,
    }
    table = rows({"benchmarks": {"scale": result}})
    assert table[1][1:3] == (
        "2 worker(s), 120 docs: docs/s (s); LM calls, most at once; docs per worker",
        "3.0 (60.0); 300, 2; 64 / 56",
    )
    assert table[-1][1:] == ("scaling efficiency, per added worker", "2: 0.5", ">= 0.8", "NO")


def test_a_run_per_worker_shows_spread_bound_and_each_workers_share() -> None:
    worker = {
        "documents": 40,
        "docs_per_s": 2.0,
        "partitions": [0, 1],
        "lm_mean_in_flight": 1.9,
        "lm_slot_wait_s_per_call": 0.8,
    }
    run = {
        "documents": 80,
        "seconds": 20.0,
        "docs_per_s": 4.0,
        "lm_calls": 160,
        "max_lm_in_flight": 4,
        "lm_bound_docs_per_s": 4.4,
        "share_of_lm_bound": 0.909,
        "rebalances_in_timed_stretch": 0,
        "per_worker": [worker, {**worker, "partitions": [2, 3]}],
        "cpu_s": {
            "kafka": 1.0,
            "worker-1": 2.0,
            "worker-2": 3.0,
            "machine (all processes)": 20.0,
            "machine capacity": 40.0,
        },
    }
    result = {
        "lm_latency_ms": 500.0,
        "partitions": 4,
        "namespaces": 16,
        "editor_window": 4,
        "documents_per_partition": [20, 20, 30, 10],
        "runs": {"2": run},
        "efficiency": {"lm_bound_per_added_worker": {"2": 0.9}},
        "goal_per_added_worker": 0.8,
        "met": None,
    }
    table = rows({"benchmarks": {"scale": result}})
    assert table[0][0] == "8 scale-out, LM 500 ms/call, 4 partitions, 16 namespaces, window 4"
    assert table[0][2] == "20 / 20 / 30 / 10"
    assert table[1][2] == "4.0 (20.0); 4.4 (0.909); 160, 4; 0"
    assert table[2][2] == "40 (2.0) p0,1 1.9, 0.8; 40 (2.0) p2,3 1.9, 0.8"
    assert table[3][2] == "5.0, kafka 1.0; 20.0 / 40.0"
    assert table[4][1:3] == ("scaling efficiency, LM bound, per added worker", "2: 0.9")
