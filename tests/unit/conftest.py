"""Unit tests see no FACTSTREAM_* settings from the shell that runs them."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def _no_factstream_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("FACTSTREAM_"):
            monkeypatch.delenv(name)
