"""The reliability suite: faults, bad and hostile input on the real stack (issue 9).

Everything here is marked ``reliability`` and ``integration``. `make reliability` runs it at
full size (FACTSTREAM_RELIABILITY=full); `make test` (CI) runs the same tests reduced. With
FACTSTREAM_RELIABILITY_RESULTS set to a folder, the figures the tests measured are written
there as ``<timestamp>.json`` (docs/reliability.md quotes such files).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from fixtures.instances import private_kafka, private_weaviate

from bench.report import new_report, write

__all__ = [
    "Figures",
    "Scale",
    "WindowEnv",
    "figures",
    "private_kafka",
    "private_weaviate",
    "scale",
    "window_env",
]

_HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _HERE in Path(item.path).parents:
            item.add_marker(pytest.mark.reliability)
            item.add_marker(pytest.mark.integration)


@dataclass(frozen=True)
class Scale:
    """How big a reliability run is: ``full`` is the issue's sizes, ``reduced`` keeps CI short."""

    full: bool

    def pick(self, full: int, reduced: int) -> int:
        return full if self.full else reduced


@pytest.fixture(scope="session")
def scale() -> Scale:
    mode = os.environ.get("FACTSTREAM_RELIABILITY", "reduced")
    if mode not in {"full", "reduced"}:
        raise pytest.UsageError(f"FACTSTREAM_RELIABILITY must be full or reduced, not {mode!r}")
    return Scale(full=mode == "full")


@dataclass
class Figures:
    """What the tests of one session measured, by name, and what they ran on."""

    report: dict[str, Any]  # bench.report.new_report's, made when the session starts
    by_name: dict[str, dict[str, Any]] = field(default_factory=dict)

    def record(self, name: str, summary: str, **values: Any) -> None:
        """Print ``summary`` (shown with -s) and keep it with ``values`` for the results file."""
        print(f"\n{name}: {summary}")
        self.by_name[name] = {"summary": summary, **values}


@pytest.fixture(scope="session")
def figures(scale: Scale) -> Iterator[Figures]:
    report = new_report("full" if scale.full else "reduced")
    del report["benchmarks"]
    measured = Figures(report)
    yield measured
    folder = os.environ.get("FACTSTREAM_RELIABILITY_RESULTS")
    if folder and measured.by_name:
        report["tests"] = dict(sorted(measured.by_name.items()))
        print(f"\nreliability figures: {write(report, Path(folder))}")


@dataclass(frozen=True)
class WindowEnv:
    """The editor window a fault test runs its workers with (the reference stays at 1)."""

    size: int

    @property
    def env(self) -> dict[str, str]:
        """The worker settings: pass as ``stack_factory(decisions, **window.env)``."""
        return {"FACTSTREAM_EDITOR_WINDOW": str(self.size)}

    def name(self, test: str) -> str:
        """The figures' name of ``test`` at this window (``crash``, ``crash_w8``)."""
        return test if self.size == 1 else f"{test}_w{self.size}"


# The windows the fault tests run at: 1 and 8, or FACTSTREAM_RELIABILITY_WINDOWS ("16";
# the policy is the workers' FACTSTREAM_EDITOR_DEPENDENCIES, inherited from the environment).
_WINDOWS = [int(w) for w in os.environ.get("FACTSTREAM_RELIABILITY_WINDOWS", "1,8").split(",")]


@pytest.fixture(params=_WINDOWS, ids=[f"w{w}" for w in _WINDOWS])
def window_env(request: pytest.FixtureRequest) -> WindowEnv:
    """Every guarantee holds one document at a time and with a window of 8 in flight."""
    return WindowEnv(int(request.param))
