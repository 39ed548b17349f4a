"""The scale-out benchmark's arithmetic: scaling efficiency overall and per added worker."""

from __future__ import annotations

from bench.scale import efficiency


def test_linear_scaling_is_efficiency_one() -> None:
    scaling = efficiency({1: 2.0, 2: 4.0, 3: 6.0})
    assert scaling["overall"] == {"1": 1.0, "2": 1.0, "3": 1.0}
    assert scaling["per_added_worker"] == {"2": 1.0, "3": 1.0}


def test_a_worker_that_adds_little_shows_in_its_own_step() -> None:
    scaling = efficiency({1: 2.0, 2: 3.8, 3: 4.2})
    assert scaling["overall"] == {"1": 1.0, "2": 0.95, "3": 0.7}
    assert scaling["per_added_worker"] == {"2": 0.9, "3": 0.2}
