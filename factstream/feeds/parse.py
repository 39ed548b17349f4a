"""RSS and Atom to FeedEntries with feedparser (the only module that imports it).

A body that is not a feed raises FeedParseError. Entries without a guid or link, or without
any text, are skipped and reported; an entry whose dates are missing, unparseable or far in
the future gets the fetch time, marked ``timestamp_source=fetched``.
"""

from __future__ import annotations

import calendar
import io
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import feedparser

from factstream.errors import FeedError
from factstream.feeds.entries import FeedEntry, TimeSource, entry_id_for, html_to_text

__all__ = ["FeedParseError", "ParsedFeed", "parse_feed"]

# Clocks differ and feeds lie a little; a day ahead is a wrong date, not a time zone.
_FUTURE_SLACK = timedelta(days=1)


class FeedParseError(FeedError):
    """The body is not an RSS or Atom feed."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"feed {url}: not a feed: {reason}")
        self.url, self.reason = url, reason


@dataclass
class ParsedFeed:
    """The usable entries of one fetched feed, and why others were skipped."""

    entries: list[FeedEntry] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def parse_feed(
    body: bytes, feed_url: str, fetched_at: datetime, content_type: str | None = None
) -> ParsedFeed:
    """Parse an RSS or Atom body fetched from ``feed_url`` at ``fetched_at``.

    Raises:
        FeedParseError: the body is not a feed (HTML, not XML, empty, ...).
    """
    # Without a content type feedparser flags every feed as malformed.
    headers = {"content-location": feed_url, "content-type": content_type or "application/xml"}
    # A stream, never a str: feedparser would fetch a str that looks like a URL.
    result = feedparser.parse(io.BytesIO(body), response_headers=headers)
    if not result.get("version") and not result.entries:
        reason = result.get("bozo_exception") or "no RSS or Atom content"
        raise FeedParseError(feed_url, str(reason)[:300])
    parsed = ParsedFeed()
    if result.get("bozo"):
        parsed.warnings.append(f"malformed feed: {str(result.get('bozo_exception'))[:300]}")
    for position, raw in enumerate(result.entries):
        entry = _entry(raw, feed_url, fetched_at, parsed.warnings)
        if isinstance(entry, str):
            parsed.skipped.append(f"entry {position}: {entry}")
        else:
            parsed.entries.append(entry)
    return parsed


def _entry(
    raw: Mapping[str, Any], feed_url: str, fetched_at: datetime, warnings: list[str]
) -> FeedEntry | str:
    guid = str(raw.get("id") or raw.get("link") or "").strip()
    if not guid:
        return "no guid and no link"
    title = html_to_text(str(raw.get("title") or "")) or None
    body = html_to_text(_body_html(raw))
    if not title and not body:
        return f"no title and no text ({guid})"
    when, source = _timestamp(raw, fetched_at)
    stated = _plain(raw, "published") or _plain(raw, "updated")
    if source is TimeSource.FETCHED and stated:
        warnings.append(f"unusable date on {guid}: {stated}")
    link = str(raw.get("link") or "").strip() or None
    return FeedEntry(
        entry_id=entry_id_for(feed_url, guid),
        feed_url=feed_url,
        guid=guid,
        title=title,
        body=body,
        link=link,
        timestamp=when,
        time_source=source,
    )


def _body_html(raw: Mapping[str, Any]) -> str:
    # Full content when the feed has it (the longest part), else the summary.
    contents = [str(part.get("value") or "") for part in raw.get("content") or []]
    best = max(contents, key=len, default="")
    return best or str(raw.get("summary") or "")


def _timestamp(raw: Mapping[str, Any], fetched_at: datetime) -> tuple[datetime, TimeSource]:
    for key, source in (("published", TimeSource.PUBLISHED), ("updated", TimeSource.UPDATED)):
        when = _utc(_plain(raw, f"{key}_parsed"))
        if when is not None and when <= fetched_at + _FUTURE_SLACK:
            return when, source
    return fetched_at, TimeSource.FETCHED


def _plain(raw: Mapping[str, Any], key: str) -> Any:
    # dict.get, not FeedParserDict.get: that maps a missing "updated" to "published" and warns.
    return dict.get(raw, key) if isinstance(raw, dict) else raw.get(key)


def _utc(parsed: object) -> datetime | None:
    if not isinstance(parsed, time.struct_time):
        return None
    try:
        return datetime.fromtimestamp(calendar.timegm(parsed), tz=UTC)
    except (OverflowError, ValueError, OSError):
        return None
