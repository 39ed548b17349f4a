"""Feed subscription: follow RSS and Atom feeds into ``factstream.documents``.

``config`` (the feed list), ``fetch`` (conditional HTTP with backoff), ``parse`` (feedparser
to entries), ``entries`` (entries to Documents), ``state`` (what was published, on a compacted
topic), ``poller`` (the loop). Import the modules themselves; this package re-exports nothing
so that ``topics.definitions`` can import ``feeds.records`` without pulling in Kafka clients.
"""

__all__: list[str] = []
