"""The reliability suite: faults, bad and hostile input on the real stack (issue 9).

Everything here is marked ``reliability`` and ``integration``. `make reliability` runs it at
full size (FACTSTREAM_RELIABILITY=full); `make test` (CI) runs the same tests reduced.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from fixtures.instances import private_kafka, private_weaviate

__all__ = ["Scale", "private_kafka", "private_weaviate", "scale"]

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
