"""After a restart the mirror passes over records it had put in its tables already."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from fixtures.changelog_stream import synthetic_batches

from factstream.consumer import ChangelogEntry, decode_payload
from factstream.mirror.runner import _unread
from factstream.mirror.store import MirrorStore, Where

AT = datetime(2024, 1, 1, tzinfo=UTC)


class _Applied:
    """Answers ``applied`` like the database: the edits in the table, as read there."""

    def __init__(self, rows: set[tuple[str, Where]]) -> None:
        self.rows = rows

    async def applied(self, edits: Sequence[tuple[str, Where]]) -> set[tuple[str, Where]]:
        return self.rows & set(edits)


async def test_records_below_read_to_that_are_in_the_tables_are_passed_over() -> None:
    [a, b, c] = [batch[0] for batch in synthetic_batches(["desk"], 30)[:3]]
    entries = [
        ChangelogEntry(0, 10, AT, "k", a),  # applied before the restart
        ChangelogEntry(0, 11, AT, "k", b),  # of a batch that was incomplete: not in the tables
        ChangelogEntry(0, 12, AT, "k", decode_payload(b"{x")),  # dead-lettered already
        ChangelogEntry(0, 13, AT, "k", c),  # beyond what was read
        ChangelogEntry(1, 5, AT, "k", a),  # the same edit elsewhere: a copy, not a re-read
    ]
    store = _Applied({(a.edit_id, (0, 10))})
    kept = await _unread(store, {0: 13, 1: 0}, entries)  # type: ignore[arg-type]
    assert [(e.partition, e.offset) for e in kept] == [(0, 11), (0, 13), (1, 5)]
    assert await _unread(store, {}, entries) == entries  # type: ignore[arg-type]
    assert MirrorStore.applied  # the method the double stands in for
