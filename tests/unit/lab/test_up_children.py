"""`factstream up`: when its API runs without keys, and which children it starts."""

from __future__ import annotations

import pytest

from factstream.config import Settings
from factstream_lab.up import _parts, child_env


def test_without_keys_the_local_api_runs_open_and_says_so() -> None:
    env, warning = child_env(Settings())
    assert env == {"FACTSTREAM_API_NO_AUTH": "true"}
    assert warning is not None and "WITHOUT authentication" in warning


def test_configured_keys_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTSTREAM_API_KEYS", '{"' + "a" * 64 + '": {"read": ["*"]}}')
    assert child_env(Settings()) == ({}, None)


def test_an_api_bound_elsewhere_is_never_opened(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTSTREAM_API_HOST", "0.0.0.0")  # noqa: S104 - the case under test
    assert child_env(Settings()) == ({}, None)


def test_the_feed_poller_runs_only_with_feeds(monkeypatch: pytest.MonkeyPatch) -> None:
    assert [p.name for p in _parts(Settings(), {})] == ["worker", "api"]
    monkeypatch.setenv("FACTSTREAM_FEEDS_LIST", '[{"url": "http://x/rss", "namespace": "n"}]')
    assert [p.name for p in _parts(Settings(), {})] == ["worker", "api", "feeds"]
