"""The mirror's database side: one round (batches, dead letters, offsets) per transaction.

A round's document batches are folded into the facts exactly as the knowledge base folds
them (``edit/apply.py``: the same code), the first batch per document wins, and the
next changelog offsets are written in the same PostgreSQL transaction: after a crash the
database holds a round whole or not at all, and reading resumes from its offsets, so no
edit is lost or applied twice. A session advisory lock keeps a second mirror of the same
topic off the database.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.types.json import Jsonb
from psycopg.types.range import Range

from factstream.edit.apply import apply_edits, touched_fact_ids
from factstream.errors import FactstreamError
from factstream.mirror.schema import DDL
from factstream.store.rules import valid_interval
from factstream.topics.records import Fact, FactEdit

__all__ = ["DeadRecord", "MirrorStore", "Offsets", "RoundResult", "Where"]

Where = tuple[int, int]  # (changelog partition, offset)


@dataclass(frozen=True)
class DeadRecord:
    """A changelog record the mirror could not apply, and why."""

    partition: int
    offset: int
    key: str | None
    value: bytes
    kind: str  # unknown_version | malformed
    schema_version: int | None
    reason: str


@dataclass(frozen=True)
class Offsets:
    """Per partition: where reading resumes, and how far it had read (see schema.py)."""

    next: dict[int, int]
    read_to: dict[int, int]


@dataclass(frozen=True)
class RoundResult:
    """What one round wrote."""

    edits: int
    batches: int
    duplicates: int
    dead: int
    skipped: int  # edits that changed nothing (the knowledge base skips them too)
    dead_by_kind: dict[str, int]


def _lock_key(topic: str) -> int:
    return int.from_bytes(
        hashlib.sha256(f"mirror\x1f{topic}".encode()).digest()[:8], "big", signed=True
    )


def _fact_row(fact: Fact) -> tuple[Any, ...]:
    interval = valid_interval(fact)
    return (
        fact.namespace,
        fact.fact_id,
        fact.text,
        fact.truth,
        Range(interval.start, interval.end, "[)"),
        fact.valid_from,
        fact.valid_to,
        fact.closed_at,
        fact.first_seen,
        fact.last_changed,
        fact.replaces,
        fact.replaced_by,
        fact.subject,
        fact.relation,
        fact.object,
        fact.object_type,
        Jsonb([entry.model_dump(mode="json") for entry in fact.history]),
        Jsonb(fact.model_dump(mode="json", exclude_none=True)),
        fact.turn_ids,
    )


_UPSERT_FACT = """
INSERT INTO facts (namespace, fact_id, text, truth, valid, valid_from, valid_to, closed_at,
    first_seen, last_changed, replaces, replaced_by, subject, relation, object, object_type,
    history, record, turn_ids)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (namespace, fact_id) DO UPDATE SET
    text = EXCLUDED.text, truth = EXCLUDED.truth, valid = EXCLUDED.valid,
    valid_from = EXCLUDED.valid_from, valid_to = EXCLUDED.valid_to,
    closed_at = EXCLUDED.closed_at, first_seen = EXCLUDED.first_seen,
    last_changed = EXCLUDED.last_changed, replaces = EXCLUDED.replaces,
    replaced_by = EXCLUDED.replaced_by, subject = EXCLUDED.subject,
    relation = EXCLUDED.relation, object = EXCLUDED.object,
    object_type = EXCLUDED.object_type, history = EXCLUDED.history, record = EXCLUDED.record,
    turn_ids = EXCLUDED.turn_ids
"""
_INSERT_EDIT = """
INSERT INTO edits (edit_id, namespace, fact_id, op, truth, event_time, document_id, batch_id,
    position, schema_version, changelog_partition, changelog_offset, skipped, record)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (edit_id) DO NOTHING
"""
_INSERT_DEAD = """
INSERT INTO dead_letters (topic, partition, "offset", key, value, kind, schema_version, reason)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (topic, partition, "offset") DO NOTHING
"""


class MirrorStore:
    """The mirror's tables on one PostgreSQL connection (autocommit; explicit transactions)."""

    def __init__(self, conn: psycopg.AsyncConnection[Any], topic: str) -> None:
        self.conn, self.topic = conn, topic

    @classmethod
    async def open(cls, dsn: str, topic: str) -> MirrorStore:
        """Connect, create the tables if missing, and take the mirror's lock on ``topic``.

        Raises:
            FactstreamError: another mirror of ``topic`` holds this database.
        """
        conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
        try:
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(4242)")  # DDL once at a time
                await conn.execute(DDL)
            cur = await conn.execute("SELECT pg_try_advisory_lock(%s)", (_lock_key(topic),))
            row = await cur.fetchone()
            if row is None or not row[0]:
                raise FactstreamError(f"another mirror of {topic} is writing to this database")
        except BaseException:
            await conn.close()
            raise
        return cls(conn, topic)

    async def close(self) -> None:
        await self.conn.close()

    async def offsets(self) -> Offsets:
        """Where the last round left each partition."""
        cur = await self.conn.execute(
            "SELECT partition, next_offset, read_to FROM mirror_offsets WHERE topic = %s",
            (self.topic,),
        )
        rows = await cur.fetchall()
        return Offsets({int(p): int(n) for p, n, _ in rows}, {int(p): int(r) for p, _, r in rows})

    async def applied(self, edits: Sequence[tuple[str, Where]]) -> set[tuple[str, Where]]:
        """Those of ``edits`` (edit id, where read) that are in the ``edits`` table as read
        there: records a restart reads again below ``read_to``."""
        if not edits:
            return set()
        cur = await self.conn.execute(
            "SELECT edit_id, changelog_partition, changelog_offset FROM edits "
            "WHERE edit_id = ANY(%s)",
            ([edit_id for edit_id, _ in edits],),
        )
        found = {(str(e), (int(p), int(o))) for e, p, o in await cur.fetchall()}
        return found & set(edits)

    async def facts(self, namespace: str) -> dict[str, Fact]:
        """Every fact of ``namespace`` as mirrored."""
        cur = await self.conn.execute("SELECT record FROM facts WHERE namespace = %s", (namespace,))
        facts = [Fact.model_validate(record) for (record,) in await cur.fetchall()]
        return {fact.fact_id: fact for fact in facts}

    async def _current(
        self, cur: psycopg.AsyncCursor[Any], batches: Sequence[Sequence[FactEdit]]
    ) -> tuple[set[tuple[str, str]], dict[tuple[str, str], Fact]]:
        docs = {(b[0].namespace, b[0].document_id) for b in batches}
        ids = {(b[0].namespace, fid) for b in batches for fid in touched_fact_ids(b)}
        await cur.execute(
            "SELECT namespace, document_id FROM mirror_batches "
            "WHERE (namespace, document_id) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
            ([ns for ns, _ in docs], [doc for _, doc in docs]),
        )
        applied = {(str(ns), str(doc)) for ns, doc in await cur.fetchall()}
        await cur.execute(
            "SELECT record FROM facts "
            "WHERE (namespace, fact_id) IN (SELECT * FROM unnest(%s::text[], %s::text[]))",
            ([ns for ns, _ in ids], [fid for _, fid in ids]),
        )
        facts = [Fact.model_validate(record) for (record,) in await cur.fetchall()]
        return applied, {(f.namespace, f.fact_id): f for f in facts}

    async def write_round(
        self,
        batches: Sequence[Sequence[FactEdit]],
        where: Mapping[str, Where],
        dead: Sequence[DeadRecord],
        offsets: Offsets,
    ) -> RoundResult:
        """Apply ``batches`` in order, record ``dead`` letters and store ``offsets``, in one
        transaction. ``where`` says where each edit (by id) was read."""
        edits: list[tuple[Any, ...]] = []
        batch_rows: list[tuple[str, str, str, int]] = []
        changed: dict[tuple[str, str], Fact] = {}
        duplicates = skipped = 0
        async with self.conn.transaction(), self.conn.cursor() as cur:
            applied, cache = await self._current(cur, batches)
            for batch in batches:
                namespace, document = batch[0].namespace, batch[0].document_id
                if (namespace, document) in applied:
                    duplicates += 1
                    continue
                applied.add((namespace, document))
                current = {
                    fid: cache[(namespace, fid)]
                    for fid in touched_fact_ids(batch)
                    if (namespace, fid) in cache
                }
                result = apply_edits(current, batch)
                for fact in result.changed.values():
                    cache[(namespace, fact.fact_id)] = changed[(namespace, fact.fact_id)] = fact
                reasons = {edit.edit_id: reason for edit, reason in result.skipped}
                skipped += len(reasons)
                edits.extend(_edit_row(e, where[e.edit_id], reasons.get(e.edit_id)) for e in batch)
                batch_rows.append((namespace, document, batch[0].batch.id, len(batch)))
            if changed:
                await cur.executemany(_UPSERT_FACT, [_fact_row(f) for f in changed.values()])
            if edits:
                await cur.executemany(_INSERT_EDIT, edits)
            if batch_rows:
                await cur.executemany(
                    "INSERT INTO mirror_batches VALUES (%s, %s, %s, %s)", batch_rows
                )
            if dead:
                await cur.executemany(
                    _INSERT_DEAD,
                    [
                        (
                            self.topic,
                            d.partition,
                            d.offset,
                            d.key,
                            d.value,
                            d.kind,
                            d.schema_version,
                            d.reason,
                        )
                        for d in dead
                    ],
                )
            await cur.executemany(
                "INSERT INTO mirror_offsets VALUES (%s, %s, %s, %s) "
                "ON CONFLICT (topic, partition) DO UPDATE SET "
                "next_offset = EXCLUDED.next_offset, read_to = EXCLUDED.read_to",
                [
                    (self.topic, p, o, offsets.read_to.get(p, o))
                    for p, o in sorted(offsets.next.items())
                ],
            )
            await cur.execute(
                "INSERT INTO mirror_stats (topic, rounds, edits_applied, batches_applied, "
                "duplicate_batches, dead_letters) VALUES (%s, 1, %s, %s, %s, %s) "
                "ON CONFLICT (topic) DO UPDATE SET rounds = mirror_stats.rounds + 1, "
                "edits_applied = mirror_stats.edits_applied + EXCLUDED.edits_applied, "
                "batches_applied = mirror_stats.batches_applied + EXCLUDED.batches_applied, "
                "duplicate_batches = mirror_stats.duplicate_batches + EXCLUDED.duplicate_batches, "
                "dead_letters = mirror_stats.dead_letters + EXCLUDED.dead_letters, "
                "updated_at = now()",
                (self.topic, len(edits), len(batch_rows), duplicates, len(dead)),
            )
        kinds = Counter(d.kind for d in dead)
        return RoundResult(len(edits), len(batch_rows), duplicates, len(dead), skipped, dict(kinds))

    async def stats(self) -> dict[str, int]:
        """The running counts of this topic's mirror (zeros before its first round)."""
        cur = await self.conn.execute(
            "SELECT rounds, edits_applied, batches_applied, duplicate_batches, dead_letters "
            "FROM mirror_stats WHERE topic = %s",
            (self.topic,),
        )
        row = await cur.fetchone()
        names = ("rounds", "edits_applied", "batches_applied", "duplicate_batches", "dead_letters")
        return dict(zip(names, (int(v) for v in row or (0,) * 5), strict=True))


def _edit_row(edit: FactEdit, where: Where, skipped: str | None) -> tuple[Any, ...]:
    return (
        edit.edit_id,
        edit.namespace,
        edit.fact_id,
        edit.op.value,
        edit.truth,
        edit.event_time,
        edit.document_id,
        edit.batch.id,
        edit.batch.position,
        edit.schema_version,
        where[0],
        where[1],
        skipped,
        Jsonb(edit.model_dump(mode="json", exclude_none=True)),
    )
