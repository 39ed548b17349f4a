"""Feed entries as factstream sees them, and the Documents they become.

An entry's id is stable across polls (a hash of the feed url and the entry's guid, else its
link). Each published version of an entry is its own Document with its own id
(``<entry id>#v<version>``): the editor skips a document id it has already applied, so an
edited entry must not reuse the id of its earlier version.
"""

from __future__ import annotations

import hashlib
import re
import warnings
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from bs4 import BeautifulSoup, MarkupResemblesLocatorWarning

from factstream.topics.records import Document, DocumentKind

__all__ = [
    "FeedEntry",
    "TimeSource",
    "content_hash",
    "document_id_for_version",
    "entry_id_for",
    "html_to_text",
]

_BLANKS = re.compile(r"[ \t\r\f\v]+")
_MANY_NEWLINES = re.compile(r"\n{3,}")


class TimeSource(StrEnum):
    """Where a Document's timestamp came from."""

    PUBLISHED = "published"
    UPDATED = "updated"
    FETCHED = "fetched"  # the entry had no usable time: the fetch time stands in


def html_to_text(html: str) -> str:
    """Readable plain text of an HTML fragment: tags, scripts and styles dropped."""
    if "<" not in html and "&" not in html:
        return _tidy(html)
    with warnings.catch_warnings():
        # A short plain string that looks like a URL or file name is still just text.
        warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style"]):
        tag.decompose()
    for tag in soup.find_all(["br"]):
        tag.replace_with("\n")
    for tag in soup.find_all(["p", "div", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr"]):
        tag.insert_after("\n\n")
    return _tidy(soup.get_text())


def _tidy(text: str) -> str:
    lines = [_BLANKS.sub(" ", line).strip() for line in text.splitlines()]
    return _MANY_NEWLINES.sub("\n\n", "\n".join(lines)).strip()


def entry_id_for(feed_url: str, guid_or_link: str) -> str:
    """Stable id of a feed entry: the same guid (or link) in the same feed, the same id."""
    digest = hashlib.sha256(f"{feed_url}\x1f{guid_or_link}".encode()).hexdigest()
    return f"feed-{digest[:32]}"


def content_hash(title: str | None, text: str, link: str | None) -> str:
    """What decides that an entry changed: its title, text and link (not its times)."""
    payload = f"{title or ''}\x1f{text}\x1f{link or ''}"
    return hashlib.sha256(payload.encode()).hexdigest()


def document_id_for_version(entry_id: str, version: int) -> str:
    """The Document id of one published version of an entry."""
    return f"{entry_id}#v{version}"


@dataclass(frozen=True)
class FeedEntry:
    """One usable entry of a fetched feed."""

    entry_id: str
    feed_url: str
    guid: str
    title: str | None
    body: str
    link: str | None
    timestamp: datetime
    time_source: TimeSource

    @property
    def text(self) -> str:
        """The Document text: title, a blank line, then summary or content."""
        if self.title and self.body:
            return f"{self.title}\n\n{self.body}"
        return self.title or self.body

    @property
    def content_hash(self) -> str:
        """Hash of what a reader sees; a new hash is a new version."""
        return content_hash(self.title, self.body, self.link)

    def to_document(self, namespace: str, version: int) -> Document:
        """The Document of this entry's ``version``."""
        return Document(
            id=document_id_for_version(self.entry_id, version),
            namespace=namespace,
            kind=DocumentKind.ARTICLE,
            timestamp=self.timestamp,
            text=self.text,
            source=self.link,
            title=self.title,
            metadata={
                "feed_url": self.feed_url,
                "feed_entry_id": self.entry_id,
                "feed_guid": self.guid,
                "feed_version": str(version),
                "content_hash": self.content_hash,
                "timestamp_source": self.time_source.value,
            },
        )
