"""Test-suite hygiene shared by unit and integration tests."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

pytest_plugins = [
    "fixtures.services",
    "fixtures.factories",
    "fixtures.stack",
    "fixtures.postgres",
    "fixtures.llama_query",
]


@pytest.fixture(autouse=True)
def _restore_environ() -> Iterator[None]:
    """A test may set env vars; the next test never sees them."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)
