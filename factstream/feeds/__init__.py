"""Feed subscription: follow RSS and Atom feeds into ``factstream.documents``.

``config`` (the feed list), ``fetch`` (conditional HTTP with backoff), ``parse`` (feedparser
to entries), ``entries`` (entries to Documents), ``state`` (what was published, on a compacted
topic; its record, FeedEntryState, lives with the other records in ``topics.records``),
``poller`` (the loop). Import the modules themselves; this package re-exports nothing.
"""

__all__: list[str] = []
