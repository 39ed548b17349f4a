"""The feed list: which feeds to follow, into which namespace, how often, with which headers."""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson
from pydantic import BaseModel, ConfigDict, Field, HttpUrl, TypeAdapter, ValidationError

from factstream.config import FeedSettings
from factstream.errors import FeedError
from factstream.topics.records import Namespace

__all__ = ["FeedListError", "FeedSpec", "load_feeds", "parse_feed_list"]


class FeedListError(FeedError):
    """The feed list cannot be read or does not validate (names where)."""


class FeedSpec(BaseModel):
    """One feed to follow."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: HttpUrl
    namespace: Namespace
    name: str | None = Field(None, description="Metric label and log name; default: host+path.")
    interval_s: float | None = Field(None, gt=0, description="Poll interval; default: settings.")
    headers: dict[str, str] = Field(default_factory=dict)

    @property
    def label(self) -> str:
        """The feed's name in logs and metric labels."""
        if self.name:
            return self.name
        parts = urlsplit(str(self.url))
        return f"{parts.netloc}{parts.path}".rstrip("/")

    @property
    def host(self) -> str:
        """The host the per-host request spacing applies to."""
        return urlsplit(str(self.url)).netloc.lower()

    @property
    def key(self) -> str:
        """Identifies the feed (url + namespace) in state; stable across restarts."""
        return hashlib.sha256(f"{self.url}\x1f{self.namespace}".encode()).hexdigest()[:16]

    def interval(self, default_s: float) -> float:
        """Seconds between polls of this feed."""
        return self.interval_s if self.interval_s is not None else default_s


_FEEDS = TypeAdapter(list[FeedSpec])


def parse_feed_list(data: Any, where: str) -> list[FeedSpec]:
    """Validate a feed list: a list of feeds, or a mapping with a ``feeds`` list."""
    if isinstance(data, dict):
        data = data.get("feeds", [])
    try:
        return _FEEDS.validate_python(data)
    except ValidationError as exc:
        raise FeedListError(f"feed list in {where} is invalid: {exc}") from exc


def _read_file(path: Path) -> Any:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise FeedListError(f"cannot read feed list {path}: {exc}") from exc
    try:
        if path.suffix == ".toml":
            return tomllib.loads(raw.decode())
        return orjson.loads(raw)
    except (tomllib.TOMLDecodeError, orjson.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FeedListError(f"feed list {path} does not parse: {exc}") from exc


def load_feeds(settings: FeedSettings) -> list[FeedSpec]:
    """The configured feeds: the file's (FACTSTREAM_FEEDS_FILE), then FACTSTREAM_FEEDS_LIST's.

    A feed (url + namespace) listed twice is followed once.
    """
    feeds: list[FeedSpec] = []
    if settings.file is not None:
        feeds += parse_feed_list(_read_file(settings.file), str(settings.file))
    if settings.list_json.strip():
        try:
            data = orjson.loads(settings.list_json)
        except orjson.JSONDecodeError as exc:
            raise FeedListError(f"FACTSTREAM_FEEDS_LIST is not JSON: {exc}") from exc
        feeds += parse_feed_list(data, "FACTSTREAM_FEEDS_LIST")
    unique: dict[str, FeedSpec] = {}
    for feed in feeds:
        unique.setdefault(feed.key, feed)
    return list(unique.values())
