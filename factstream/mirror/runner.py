"""The mirror's loop: read the changelog in rounds, write them in short transactions.

A round reads every partition up to its read_committed end as the round began (so a
document batch committed before then is whole, wherever its edits landed), hands the whole
batches to the database in their documents' input order (in transactions of at most
``FACTSTREAM_MIRROR_MAX_TRANSACTION_BATCHES``), and stores next offsets that stop
before any edit of a batch still incomplete: a restart reads those again (and passes over
the records between there and where it had read that are in the tables already). Records of an
unknown schema version or unreadable ones go to the ``dead_letters`` table with the reason;
the rest flows.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from factstream.config import KafkaSettings, MirrorSettings
from factstream.consumer import (
    BatchAssembler,
    ChangelogConsumer,
    ChangelogEntry,
    Malformed,
    UnknownVersion,
)
from factstream.metrics import MirrorMetrics
from factstream.mirror.store import DeadRecord, MirrorStore, Offsets, RoundResult, Where
from factstream.topics.definitions import TopicName, topic_name

__all__ = ["MirrorReport", "run_mirror"]

log = logging.getLogger(__name__)


@dataclass
class MirrorReport:
    """What a run of the mirror wrote (this process only)."""

    rounds: int = 0
    edits: int = 0
    batches: int = 0
    duplicates: int = 0
    dead_letters: int = 0
    skipped: int = 0

    def add(self, result: RoundResult) -> None:
        self.rounds += 1
        self.edits += result.edits
        self.batches += result.batches
        self.duplicates += result.duplicates
        self.dead_letters += result.dead
        self.skipped += result.skipped


def _dead(entry: ChangelogEntry) -> DeadRecord | None:
    payload = entry.payload
    if isinstance(payload, UnknownVersion):
        kind, version = "unknown_version", payload.version
    elif isinstance(payload, Malformed):
        kind, version = "malformed", None
    else:
        return None
    return DeadRecord(
        entry.partition, entry.offset, entry.key, payload.raw, kind, version, payload.reason
    )


async def _read_round(
    changelog: ChangelogConsumer, settings: MirrorSettings, follow: bool
) -> list[ChangelogEntry] | None:
    """The next round's entries; None when caught up and not following."""
    ends = await changelog.end_offsets()
    if await changelog.caught_up(ends):
        if not follow:
            return None
        return await changelog.poll(settings.poll_s, settings.max_round_records)
    entries: list[ChangelogEntry] = []
    while not await changelog.caught_up(ends):
        entries += await changelog.poll(settings.poll_s, settings.max_round_records)
    return entries


async def _report(
    result: RoundResult,
    changelog: ChangelogConsumer,
    report: MirrorReport,
    metrics: MirrorMetrics | None,
    on_round: Callable[[RoundResult, int], None] | None,
) -> None:
    report.add(result)
    lag = await changelog.lag()
    if metrics is not None:
        metrics.rounds.inc()
        metrics.edits.inc(result.edits)
        metrics.batches.labels("applied").inc(result.batches)
        metrics.batches.labels("duplicate").inc(result.duplicates)
        for kind, count in result.dead_by_kind.items():
            metrics.dead_letters.labels(kind).inc(count)
        metrics.lag.set(lag)
    if on_round is not None:
        on_round(result, lag)


async def _unread(
    store: MirrorStore, read_to: dict[int, int], entries: list[ChangelogEntry]
) -> list[ChangelogEntry]:
    """``entries`` less the records an earlier run had already put in the tables.

    After a restart, reading resumes before the edits of batches that were incomplete; the
    records between there and ``read_to`` that were not of such a batch are in the tables
    already (edits as read there, dead letters): they are passed over, not met again.
    """
    again = [e for e in entries if e.offset < read_to.get(e.partition, 0)]
    if not again:
        return entries
    edits = [(e.edit.edit_id, (e.partition, e.offset)) for e in again if e.edit is not None]
    applied = await store.applied(edits)
    return [
        e
        for e in entries
        if e.offset >= read_to.get(e.partition, 0)
        or (e.edit is not None and (e.edit.edit_id, (e.partition, e.offset)) not in applied)
    ]


async def run_mirror(
    kafka: KafkaSettings,
    settings: MirrorSettings,
    dsn: str,
    namespaces: Sequence[str] | None = None,
    *,
    follow: bool = True,
    metrics: MirrorMetrics | None = None,
    on_round: Callable[[RoundResult, int], None] | None = None,
) -> MirrorReport:
    """Mirror the changelog into the database at ``dsn`` (only ``namespaces``, if given).

    Args:
        follow: keep going (until cancelled); False: stop once caught up.
        on_round: called after each round written, with its result and the lag after it.
    """
    topic = topic_name(TopicName.FACT_EDITS, kafka.topic_prefix)
    store = await MirrorStore.open(dsn, topic)
    report = MirrorReport()
    try:
        stored = await store.offsets()
        log.info("mirror of %s resumes at %s", topic, stored.next or "the beginning")
        async with ChangelogConsumer(
            kafka,
            offsets=stored.next,
            namespaces=namespaces,
            dedupe_window=0,  # the database de-duplicates, across restarts too
            client_id="factstream-mirror",
        ) as changelog:
            assembler, where = BatchAssembler(), dict[str, Where]()
            while (entries := await _read_round(changelog, settings, follow)) is not None:
                entries = await _unread(store, stored.read_to, entries)
                dead = []
                for entry in entries:
                    if entry.edit is not None:
                        assembler.add(entry)
                        where.setdefault(entry.edit.edit_id, (entry.partition, entry.offset))
                    elif (letter := _dead(entry)) is not None:
                        dead.append(letter)
                while True:  # a round in transactions of at most max_transaction_batches
                    batches = assembler.ready(settings.max_transaction_batches)
                    held = assembler.held()
                    positions = changelog.positions()
                    offsets = Offsets(
                        {p: min(o, held.get(p, o)) for p, o in positions.items()},
                        {p: max(o, stored.read_to.get(p, o)) for p, o in positions.items()},
                    )
                    if not batches and not dead and offsets == stored:
                        break
                    result = await store.write_round(batches, where, dead, offsets)
                    stored, dead = offsets, []
                    for batch in batches:
                        for edit in batch:
                            where.pop(edit.edit_id, None)
                    await _report(result, changelog, report, metrics, on_round)
                    if len(batches) < settings.max_transaction_batches:
                        break
    finally:
        await store.close()
    return report
