"""The feed list from a JSON or TOML file and from FACTSTREAM_FEEDS_LIST."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factstream.config import FeedSettings
from factstream.feeds.config import FeedListError, load_feeds


def test_feeds_from_a_toml_file_and_the_env_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "feeds.toml"
    path.write_text(
        '[[feeds]]\nurl = "https://a.example/rss"\nnamespace = "desk"\ninterval_s = 60\n'
        '[feeds.headers]\nAuthorization = "Bearer x"\n'
    )
    listed = [
        {"url": "https://b.example/atom", "namespace": "science", "name": "b"},
        {"url": "https://a.example/rss", "namespace": "desk"},  # a duplicate: followed once
    ]
    monkeypatch.setenv("FACTSTREAM_FEEDS_FILE", str(path))
    monkeypatch.setenv("FACTSTREAM_FEEDS_LIST", json.dumps(listed))
    a, b = load_feeds(FeedSettings())
    assert (a.namespace, a.interval(900), a.headers) == ("desk", 60, {"Authorization": "Bearer x"})
    assert (a.label, b.label, b.interval(900)) == ("a.example/rss", "b", 900)
    assert a.host == "a.example"


def test_a_json_file_may_be_a_plain_list(tmp_path: Path) -> None:
    path = tmp_path / "feeds.json"
    path.write_text(json.dumps([{"url": "https://a.example/rss", "namespace": "desk"}]))
    assert len(load_feeds(FeedSettings(file=path))) == 1


@pytest.mark.parametrize(
    "listed",
    ["not json", '[{"url": "ftp://a/b", "namespace": "desk"}]', '[{"url": "https://a/b"}]'],
)
def test_bad_feed_lists_are_refused_with_where(listed: str) -> None:
    with pytest.raises(FeedListError, match="FACTSTREAM_FEEDS_LIST"):
        load_feeds(FeedSettings(FACTSTREAM_FEEDS_LIST=listed))


def test_no_feeds_configured_is_an_empty_list() -> None:
    assert load_feeds(FeedSettings()) == []
