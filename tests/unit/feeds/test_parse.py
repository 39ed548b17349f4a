"""Feeds to entries to Documents: RSS and Atom, HTML stripped, stable ids, missing dates."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from factstream.feeds.entries import TimeSource, entry_id_for, html_to_text
from factstream.feeds.parse import FeedParseError, parse_feed

DATA = Path(__file__).resolve().parents[2] / "data" / "feeds"
FETCHED = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
RSS_URL, ATOM_URL = "https://news.example.org/rss.xml", "https://science.example.org/atom.xml"


def test_rss_entries_become_documents() -> None:
    parsed = parse_feed((DATA / "rss.xml").read_bytes(), RSS_URL, FETCHED)
    bridge, harbour, storm = parsed.entries
    doc = bridge.to_document("desk", 1)
    assert doc.title == "Council approves new bridge"
    assert doc.text == (
        "Council approves new bridge\n\nThe city council approved the river bridge on Tuesday."
    )
    assert doc.source == "https://news.example.org/bridge"
    assert doc.timestamp == datetime(2023, 9, 5, 12, 30, tzinfo=UTC)
    assert doc.id == f"{entry_id_for(RSS_URL, 'wire-1001')}#v1"
    assert doc.metadata["timestamp_source"] == "published"
    assert doc.metadata["feed_entry_id"] == bridge.entry_id
    assert doc.metadata["feed_version"] == "1"
    # No guid: the link identifies the entry.
    assert harbour.guid == "https://news.example.org/harbour"


@pytest.mark.parametrize("index", [1, 2], ids=["no date", "malformed date"])
def test_entries_without_a_usable_time_get_the_fetch_time_and_say_so(index: int) -> None:
    parsed = parse_feed((DATA / "rss.xml").read_bytes(), RSS_URL, FETCHED)
    entry = parsed.entries[index]
    assert entry.timestamp == FETCHED
    assert entry.time_source is TimeSource.FETCHED
    assert entry.to_document("desk", 1).metadata["timestamp_source"] == "fetched"


def test_a_date_far_in_the_future_is_not_used() -> None:
    body = (DATA / "rss.xml").read_bytes().replace(b"Tue, 05 Sep 2023", b"Tue, 05 Sep 2090")
    assert parse_feed(body, RSS_URL, FETCHED).entries[0].time_source is TimeSource.FETCHED


def test_atom_entries_prefer_content_and_resolve_relative_links() -> None:
    probe, telescope = parse_feed((DATA / "atom.xml").read_bytes(), ATOM_URL, FETCHED).entries
    assert probe.title == "Probe reaches Jupiter"  # type="html" title, tags stripped
    assert probe.body == "The probe entered orbit around Jupiter after a six-year trip."
    assert probe.timestamp == datetime(2023, 9, 6, 8, 0, tzinfo=UTC)
    assert probe.time_source is TimeSource.PUBLISHED
    assert telescope.time_source is TimeSource.UPDATED
    assert telescope.timestamp == datetime(2023, 9, 5, 10, 0, tzinfo=UTC)
    assert telescope.link == "https://science.example.org/telescope"


def test_ids_are_stable_across_polls_and_differ_between_feeds() -> None:
    body = (DATA / "atom.xml").read_bytes()
    first = [e.entry_id for e in parse_feed(body, ATOM_URL, FETCHED).entries]
    later = [e.entry_id for e in parse_feed(body, ATOM_URL, datetime.now(UTC)).entries]
    assert first == later
    assert first != [e.entry_id for e in parse_feed(body, RSS_URL, FETCHED).entries]


def test_an_edit_changes_the_content_hash_but_not_the_entry_id() -> None:
    body = (DATA / "atom.xml").read_bytes()
    edited = body.replace(b"six-year trip", b"seven-year trip")
    before = parse_feed(body, ATOM_URL, FETCHED).entries[0]
    after = parse_feed(edited, ATOM_URL, FETCHED).entries[0]
    assert before.entry_id == after.entry_id
    assert before.content_hash != after.content_hash
    assert after.to_document("desk", 2).id == f"{after.entry_id}#v2"


def test_entries_without_id_or_text_are_skipped_with_a_reason() -> None:
    body = b"""<rss version="2.0"><channel><title>t</title>
      <item><description>no link, no guid</description></item>
      <item><link>https://x.example/a</link></item>
      <item><title>fine</title><link>https://x.example/b</link></item>
    </channel></rss>"""
    parsed = parse_feed(body, RSS_URL, FETCHED)
    assert [e.title for e in parsed.entries] == ["fine"]
    assert len(parsed.skipped) == 2
    assert "no guid and no link" in parsed.skipped[0]


@pytest.mark.parametrize(
    "body", [b"<html><body><p>Login</p></body></html>", b"not xml at all", b""]
)
def test_bodies_that_are_not_feeds_raise(body: bytes) -> None:
    with pytest.raises(FeedParseError, match="not a feed"):
        parse_feed(body, RSS_URL, FETCHED)


@pytest.mark.parametrize(
    ("html", "text"),
    [
        (
            "<p>Hello <b>world</b> &amp; friends</p><p>Second<br/>line</p>",
            "Hello world & friends\n\nSecond\nline",
        ),
        ("<div>a<script>evil()</script><style>p{}</style></div>", "a"),
        ("plain   text\n\n\n\nagain", "plain text\n\nagain"),
        ("https://example.org/a", "https://example.org/a"),
        ("", ""),
    ],
)
def test_html_to_text(html: str, text: str) -> None:
    assert html_to_text(html) == text
