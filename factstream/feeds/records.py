"""The record of what the feed poller published, on the compacted ``factstream.feed-state``."""

from __future__ import annotations

from pydantic import AwareDatetime, Field

from factstream.topics.records import Id, Namespace, Record

__all__ = ["FeedEntryState", "state_key"]


def state_key(namespace: str, entry_id: str) -> bytes:
    """The compaction key: one live record per (namespace, feed entry)."""
    return f"{namespace}/{entry_id}".encode()


class FeedEntryState(Record):
    """The latest published version of one feed entry.

    Written in the same Kafka transaction as the Document it describes, so the two are
    committed together or not at all.
    """

    namespace: Namespace
    entry_id: Id = Field(description="Stable id of the entry (hash of feed url and guid/link).")
    feed_url: str
    content_hash: str = Field(description="sha256 of the entry's title, text and link.")
    version: int = Field(ge=1, description="1 for the first publication, +1 per content change.")
    document_id: Id
    published_at: AwareDatetime
