"""After a crash: find the batches already on the changelog, so their documents skip the LM.

A worker restarts at the first input offset it had not committed. Every batch it may have
published for that document or a later one went out after that document was appended (the
documents topic stamps LogAppendTime), so reading the changelog from that moment finds them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable

from factstream.config import KafkaSettings
from factstream.streams.changelog import first_batches, read_changelog
from factstream.topics.records import FactEdit

__all__ = ["CLOCK_SLACK_MS", "ChangelogRead", "RecoveredBatches"]

ChangelogRead = Callable[[int], AsyncIterator[FactEdit]]

log = logging.getLogger(__name__)

# The changelog carries its producers' clocks; read a little earlier than the append time
# so that a worker clock slightly behind the broker's cannot hide a batch.
CLOCK_SLACK_MS = 60_000


class RecoveredBatches:
    """The changelog's batches since one partition's first unfinished document (read once),
    and the batches published since then whose applying failed."""

    def __init__(self, kafka: KafkaSettings, read: ChangelogRead | None = None) -> None:
        """
        Args:
            kafka: the cluster whose changelog is read.
            read: reads the changelog from a time (ms); Kafka's by default.
        """
        self._read = read or (lambda since_ms: read_changelog(kafka, since_ms=since_ms))
        self._batches: dict[tuple[str, str], list[FactEdit]] | None = None
        self._kept: dict[tuple[str, str], list[FactEdit]] = {}
        self._loading = asyncio.Lock()

    def keep(self, batch: list[FactEdit]) -> None:
        """A batch this worker published but could not apply yet (an outage): ``take``
        returns it, so the retry applies it and the document never reaches the LM again."""
        self._kept[(batch[0].namespace, batch[0].document_id)] = batch

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
        if (kept := self._kept.pop((namespace, document_id), None)) is not None:
            return kept
        return (await self.load(appended_ms)).pop((namespace, document_id), None)

    async def load(self, appended_ms: int) -> dict[tuple[str, str], list[FactEdit]]:
        """Read the changelog from ``appended_ms`` (less the slack), on the first call only.

        Several documents in flight may ask at once: the first read serves them all. A
        caller with documents in flight calls it for the oldest one before deciding any.
        """
        async with self._loading:
            if self._batches is None:
                since = max(0, appended_ms - CLOCK_SLACK_MS)
                edits = [edit async for edit in self._read(since)]
                self._batches = first_batches(edits)
                log.info(
                    "recovery: %d batches on the changelog since %d", len(self._batches), since
                )
            return self._batches
