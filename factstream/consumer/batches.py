"""Whole document batches from changelog entries, in the order their documents were read.

A document's edits go out in one transaction, keyed by fact id, so they spread over the
changelog's partitions and arrive interleaved with other batches. ``BatchAssembler`` holds
a batch's edits until it is whole, then hands batches out sorted by their input position
(a namespace's documents come from one input partition, in order), holding a whole batch
back while an earlier document of its input partition is still incomplete. Feed it from a
``ChangelogConsumer`` with ``dedupe_window=0``: a document's second batch shares edit ids
with its first, and with some dropped it would never be whole.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from factstream.consumer.entries import ChangelogEntry
from factstream.topics.records import FactEdit

__all__ = ["BatchAssembler", "input_position"]


def input_position(edit: FactEdit) -> tuple[str, int, int]:
    """Where the edit's document was read: (topic, partition, offset)."""
    return (edit.input.topic, edit.input.partition, edit.input.offset)


@dataclass
class _Pending:
    size: int
    edits: dict[int, FactEdit] = field(default_factory=dict)
    at: list[tuple[int, int]] = field(default_factory=list)  # (changelog partition, offset)

    @property
    def whole(self) -> bool:
        return len(self.edits) == self.size


class BatchAssembler:
    """Collects edits into whole batches (by ``batch.id``)."""

    def __init__(self) -> None:
        self._pending: dict[str, _Pending] = {}

    def add(self, entry: ChangelogEntry) -> None:
        """Take one entry holding an edit (other entries are ignored)."""
        edit = entry.edit
        if edit is None:
            return
        pending = self._pending.setdefault(edit.batch.id, _Pending(edit.batch.size))
        pending.edits.setdefault(edit.batch.position, edit)  # a copy changes nothing
        pending.at.append((entry.partition, entry.offset))

    def ready(self, limit: int | None = None) -> list[list[FactEdit]]:
        """The whole batches that may go now, in input order (at most ``limit``, the first
        ones); they leave the assembler, the rest stay for the next call."""
        first_open: dict[tuple[str, int], int] = {}
        for pending in self._pending.values():
            if not pending.whole:
                topic, partition, offset = input_position(next(iter(pending.edits.values())))
                key = (topic, partition)
                first_open[key] = min(offset, first_open.get(key, offset))
        out: list[tuple[tuple[str, int, int], datetime, str]] = []
        for batch_id, pending in self._pending.items():
            if not pending.whole:
                continue
            where = input_position(pending.edits[0])
            blocker = first_open.get(where[:2])
            if blocker is None or blocker > where[2]:
                out.append((where, pending.edits[0].created_at, batch_id))
        out.sort()  # of two batches for one document, the one created first goes first
        batches = []
        for _, _, batch_id in out[:limit]:
            pending = self._pending.pop(batch_id)
            batches.append([pending.edits[i] for i in range(pending.size)])
        return batches

    def held(self) -> dict[int, int]:
        """The lowest changelog offset per partition of an edit still held (not handed out):
        a reader that stores offsets stores no further than this, to read it again."""
        lowest: dict[int, int] = {}
        for pending in self._pending.values():
            for partition, offset in pending.at:
                lowest[partition] = min(offset, lowest.get(partition, offset))
        return lowest

    def __len__(self) -> int:
        return len(self._pending)
