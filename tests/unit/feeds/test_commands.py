"""``factstream feeds list``: the configured feeds, and a clear error for a bad list."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from factstream.cli import app

runner = CliRunner()


def test_list_shows_the_configured_feeds(monkeypatch: pytest.MonkeyPatch) -> None:
    listed = [{"url": "https://a.example/rss", "namespace": "desk", "interval_s": 60}]
    monkeypatch.setenv("FACTSTREAM_FEEDS_LIST", json.dumps(listed))
    result = runner.invoke(app, ["feeds", "list"])
    assert result.exit_code == 0, result.output
    assert "a.example/rss" in result.output and "desk" in result.output


@pytest.mark.parametrize("command", ["list", "poll-once", "run"])
def test_a_bad_feed_list_fails_before_anything_starts(
    command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTSTREAM_FEEDS_LIST", '[{"url": "https://a.example/rss"}]')
    result = runner.invoke(app, ["feeds", command])
    assert result.exit_code == 1
    assert "FACTSTREAM_FEEDS_LIST is invalid" in result.output
