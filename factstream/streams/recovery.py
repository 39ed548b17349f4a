"""After a crash: find the batches already on the changelog, so their documents skip the LM.

A worker restarts at the first input offset it had not committed. Every batch it may have
published for that document or a later one went out after that document was appended (the
documents topic stamps LogAppendTime), so reading the changelog from that moment finds them.
"""

from __future__ import annotations

import logging

from factstream.config import KafkaSettings
from factstream.streams.changelog import first_batches, read_changelog
from factstream.topics.records import FactEdit

__all__ = ["CLOCK_SLACK_MS", "RecoveredBatches"]

log = logging.getLogger(__name__)

# The changelog carries its producers' clocks; read a little earlier than the append time
# so that a worker clock slightly behind the broker's cannot hide a batch.
CLOCK_SLACK_MS = 60_000


class RecoveredBatches:
    """The changelog's batches since one partition's first unfinished document (read once)."""

    def __init__(self, kafka: KafkaSettings) -> None:
        self._kafka = kafka
        self._batches: dict[tuple[str, str], list[FactEdit]] | None = None

    async def take(
        self, namespace: str, document_id: str, appended_ms: int
    ) -> list[FactEdit] | None:
        """The batch already published for this document, if any.

        Args:
            namespace: the document's namespace.
            document_id: the document's id.
            appended_ms: when the broker appended the document; the first call reads the
                changelog from this moment (the first document after a restart is the oldest
                one that can have a batch without an applied record).
        """
        if self._batches is None:
            since = max(0, appended_ms - CLOCK_SLACK_MS)
            edits = [edit async for edit in read_changelog(self._kafka, since_ms=since)]
            self._batches = first_batches(edits)
            log.info("recovery: %d batches on the changelog since %d", len(self._batches), since)
        return self._batches.pop((namespace, document_id), None)
