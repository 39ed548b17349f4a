"""Keep a full-text search index of the facts that hold now, fed by the changelog.

    python -m examples.search_index index.sqlite -n desk            # catch up, then stop
    python -m examples.search_index index.sqlite -n desk --follow   # and keep it current
    python -m examples.search_index index.sqlite --search "mayor"

The index is SQLite FTS5. It stores the changelog offsets it has read in the same SQLite
transaction as the rows they changed, and resumes from them (``ChangelogConsumer``'s
caller-stored offsets), so a crash neither loses nor repeats an edit. Edits are applied a
whole document batch at a time, in the documents' order (``BatchAssembler``): a batch's
edits spread over partitions, and a rewrite read before the add of the fact it replaces
would leave the old fact behind. What it keeps: facts
added or rewritten in, and dropped when invalidated, rewritten away or closed (a closed
fact was true of its interval, but no longer holds). A record of a newer schema version is
reported and passed over.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from factstream.config import KafkaSettings, load_settings
from factstream.consumer import (
    BatchAssembler,
    ChangelogConsumer,
    ChangelogEntry,
    Malformed,
    UnknownVersion,
)
from factstream.topics.records import EditOp, FactEdit

__all__ = ["SearchIndex", "update_index"]

log = logging.getLogger("examples.search_index")


class SearchIndex:
    """Facts that hold now, searchable by their words, with the offsets read so far."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path)
        self.db.executescript(
            """
            CREATE VIRTUAL TABLE IF NOT EXISTS facts
                USING fts5(fact_id UNINDEXED, namespace UNINDEXED, text);
            CREATE TABLE IF NOT EXISTS offsets (partition INTEGER PRIMARY KEY, next INTEGER);
            """
        )

    def offsets(self) -> dict[int, int]:
        """The next changelog offset per partition, as last stored."""
        return dict(self.db.execute("SELECT partition, next FROM offsets").fetchall())

    def _drop(self, fact_id: str) -> None:
        self.db.execute("DELETE FROM facts WHERE fact_id = ?", (fact_id,))

    def _apply(self, edit: FactEdit) -> None:
        if edit.op in (EditOp.ADD, EditOp.REWRITE):
            self._drop(edit.fact_id)  # an edit read twice changes nothing
            self.db.execute(
                "INSERT INTO facts (fact_id, namespace, text) VALUES (?, ?, ?)",
                (edit.fact_id, edit.namespace, edit.text),
            )
        if edit.op is EditOp.REWRITE and edit.replaces is not None:
            self._drop(edit.replaces)
        if edit.op in (EditOp.INVALIDATE, EditOp.CLOSE):
            self._drop(edit.fact_id)

    def apply(
        self,
        batches: Sequence[Sequence[FactEdit]],
        others: Sequence[ChangelogEntry],
        positions: dict[int, int],
    ) -> int:
        """Apply whole batches in order, and store ``positions``, in one transaction."""
        with self.db:
            for batch in batches:
                for edit in batch:
                    self._apply(edit)
            for entry in others:
                if isinstance(entry.payload, UnknownVersion | Malformed):
                    where = f"{entry.partition}@{entry.offset}"
                    log.warning("passed over %s: %s", where, entry.payload.reason)
            self.db.executemany(
                "INSERT OR REPLACE INTO offsets (partition, next) VALUES (?, ?)",
                sorted(positions.items()),
            )
        return sum(len(batch) for batch in batches)

    def search(self, words: str, limit: int = 10) -> list[tuple[str, str]]:
        """(fact id, text) of the facts matching ``words`` (FTS5 syntax), best first."""
        rows = self.db.execute(
            "SELECT fact_id, text FROM facts WHERE facts MATCH ? ORDER BY rank LIMIT ?",
            (words, limit),
        )
        return [(str(fact_id), str(text)) for fact_id, text in rows]


async def update_index(
    index: SearchIndex,
    kafka: KafkaSettings,
    namespaces: Sequence[str] | None = None,
    *,
    follow: bool = False,
) -> int:
    """Bring ``index`` up to the changelog's end (and keep it there with ``follow``)."""
    applied = 0
    assembler = BatchAssembler()  # a fact's edits are ordered; a namespace's come in batches
    async with ChangelogConsumer(  # whole batches de-duplicate; ids alone would split them
        kafka, offsets=index.offsets(), namespaces=namespaces, dedupe_window=0
    ) as changelog:
        ends = await changelog.end_offsets()
        while follow or not await changelog.caught_up(ends):
            entries = await changelog.poll(timeout_s=1.0)
            for entry in entries:
                assembler.add(entry)
            batches = assembler.ready()
            held = assembler.held()  # edits of unfinished batches: read again after a restart
            positions = {p: min(o, held.get(p, o)) for p, o in changelog.positions().items()}
            others = [entry for entry in entries if entry.edit is None]
            applied += index.apply(batches, others, positions)
    return applied


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("index", type=Path, help="the SQLite file of the index")
    parser.add_argument("-n", "--namespace", action="append", help="only this namespace")
    parser.add_argument("--follow", action="store_true", help="keep the index current")
    parser.add_argument("--search", help="search the index instead of updating it")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    logging.getLogger("aiokafka").setLevel(logging.WARNING)
    index = SearchIndex(args.index)
    if args.search:
        for fact_id, text in index.search(args.search):
            print(f"{fact_id}  {text}")
        return
    applied = asyncio.run(
        update_index(index, load_settings().kafka, args.namespace, follow=args.follow)
    )
    print(f"{applied} edits applied")


if __name__ == "__main__":
    main()
