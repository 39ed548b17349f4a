"""``ChangelogConsumer``: FactEdit records from the changelog as a downstream team reads them.

read_committed (a document's batch is seen whole or not at all), every partition of
``factstream.fact-edits`` assigned to this one reader, resumed from offsets the caller
stored, else the consumer group's committed offsets, else a start (earliest, latest or a
time). At least once: whatever the caller has not stored or committed is read again after
a restart; edits seen twice in one process (a batch published twice) are dropped by
``edit_id``. Tombstones, records of a newer schema version and unreadable ones come through
as such (``entries.py``), so a reader never crashes on them.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Collection, Mapping
from datetime import UTC, datetime
from types import TracebackType
from typing import Literal, Self

from aiokafka import AIOKafkaConsumer, TopicPartition

from factstream.config import KafkaSettings
from factstream.consumer.entries import ChangelogEntry, decode_payload
from factstream.errors import FactstreamError
from factstream.streams.admin import topic_partitions
from factstream.streams.changelog import settled_ends
from factstream.topics.definitions import TopicName, topic_name
from factstream.topics.records import EditOp

__all__ = ["ChangelogConsumer", "Start"]

# Where a reader with neither stored nor committed offsets begins.
Start = Literal["earliest", "latest"] | datetime


class ChangelogConsumer:
    """Reads ``factstream.fact-edits`` (read_committed) as ``ChangelogEntry`` values.

    Args:
        kafka: the cluster and topic prefix.
        start: where to begin without stored or committed offsets: ``"earliest"``,
            ``"latest"`` (only what is committed from now on), or a time (the first record
            written at or after it, per partition).
        offsets: next offset per partition, as the caller stored them (wins over the rest).
        group_id: a consumer group whose committed offsets are resumed and advanced by
            ``commit()``; None: the caller keeps offsets (``positions()``).
        namespaces: only edits of these namespaces (None: all).
        ops: only edits of these ops (None: all; given, only edits come through).
        dedupe_window: how many recent edit ids are remembered to drop repeats (0: none).
    """

    def __init__(
        self,
        kafka: KafkaSettings,
        *,
        start: Start = "earliest",
        offsets: Mapping[int, int] | None = None,
        group_id: str | None = None,
        namespaces: Collection[str] | None = None,
        ops: Collection[EditOp] | None = None,
        dedupe_window: int = 100_000,
        client_id: str = "factstream-consumer",
    ) -> None:
        self.kafka, self.start_at, self.group_id = kafka, start, group_id
        self._stored = dict(offsets or {})
        self._namespaces = frozenset(namespaces) if namespaces is not None else None
        self._ops = frozenset(ops) if ops is not None else None
        self._window = dedupe_window
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._next: dict[int, int] = {}
        self._parts: list[TopicPartition] = []
        self.topic = topic_name(TopicName.FACT_EDITS, kafka.topic_prefix)
        self.duplicates = 0  # edits dropped as repeats of an edit id seen before
        self._consumer = AIOKafkaConsumer(
            bootstrap_servers=kafka.bootstrap_servers,
            group_id=group_id,
            client_id=f"{client_id}-{uuid.uuid4().hex[:8]}",
            isolation_level="read_committed",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
        )

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        """Connect, assign every partition and seek each to where reading resumes."""
        consumer = self._consumer
        await consumer.start()
        try:
            partitions = await topic_partitions(self.kafka, self.topic)
            if not partitions:
                raise FactstreamError(f"topic {self.topic} does not exist (no worker ran yet?)")
            self._parts = [TopicPartition(self.topic, p) for p in partitions]
            consumer.assign(self._parts)
            for tp in self._parts:
                await self._seek(tp)
                self._next[tp.partition] = await consumer.position(tp)
        except BaseException:
            await consumer.stop()
            raise

    async def stop(self) -> None:
        await self._consumer.stop()

    async def _seek(self, tp: TopicPartition) -> None:
        consumer = self._consumer
        if tp.partition in self._stored:
            consumer.seek(tp, self._stored[tp.partition])
            return
        if self.group_id is not None:
            committed = await consumer.committed(tp)
            if committed is not None:
                consumer.seek(tp, committed)
                return
        if self.start_at == "earliest":
            await consumer.seek_to_beginning(tp)
        elif self.start_at == "latest":
            await consumer.seek_to_end(tp)
        else:
            when = self.start_at if self.start_at.tzinfo else self.start_at.replace(tzinfo=UTC)
            found = await consumer.offsets_for_times({tp: int(when.timestamp() * 1000)})
            if found[tp] is None:
                await consumer.seek_to_end(tp)
            else:
                consumer.seek(tp, found[tp].offset)

    def _keep(self, entry: ChangelogEntry) -> bool:
        edit = entry.edit
        if self._ops is not None and (edit is None or edit.op not in self._ops):
            return False
        namespace = entry.namespace
        if self._namespaces is not None and namespace not in self._namespaces:
            return False
        if edit is None or self._window == 0:
            return True
        if edit.edit_id in self._seen:
            self.duplicates += 1
            return False
        self._seen[edit.edit_id] = None
        if len(self._seen) > self._window:
            self._seen.popitem(last=False)
        return True

    async def poll(self, timeout_s: float = 1.0, max_records: int = 500) -> list[ChangelogEntry]:
        """The next records (possibly none within ``timeout_s``), in order per partition;
        ones the filters drop or repeats of an edit id are left out, but counted as read."""
        data = await self._consumer.getmany(
            timeout_ms=int(timeout_s * 1000), max_records=max_records
        )
        entries = []
        for tp, records in data.items():
            for record in records:
                self._next[tp.partition] = record.offset + 1
                key = record.key.decode(errors="replace") if record.key is not None else None
                entry = ChangelogEntry(
                    partition=tp.partition,
                    offset=record.offset,
                    timestamp=datetime.fromtimestamp(record.timestamp / 1000, UTC),
                    key=key,
                    payload=decode_payload(record.value),
                )
                if self._keep(entry):
                    entries.append(entry)
        for tp in self._parts:  # past transaction markers too (they occupy offsets)
            self._next[tp.partition] = max(
                self._next[tp.partition], await self._consumer.position(tp)
            )
        return entries

    def positions(self) -> dict[int, int]:
        """Next offset per partition after everything returned so far: what to store."""
        return dict(self._next)

    async def commit(self, positions: Mapping[int, int] | None = None) -> None:
        """Commit ``positions`` (default: everything returned so far) to the consumer group."""
        if self.group_id is None:
            raise FactstreamError("commit() needs a group_id; store positions() yourself")
        chosen = positions if positions is not None else self._next
        await self._consumer.commit(
            {TopicPartition(self.topic, p): offset for p, offset in chosen.items()}
        )

    async def end_offsets(self) -> dict[int, int]:
        """The read_committed end of each partition (open transactions not included)."""
        ends: dict[TopicPartition, int] = await self._consumer.end_offsets(self._parts)
        return {tp.partition: offset for tp, offset in ends.items()}

    async def lag(self) -> int:
        """Committed records not yet returned, over every partition."""
        ends = await self.end_offsets()
        return sum(max(0, end - self._next.get(p, 0)) for p, end in ends.items())

    async def caught_up(self, ends: Mapping[int, int]) -> bool:
        """True once every partition is read up to ``ends`` (transaction markers included)."""
        for tp in self._parts:
            if await self._consumer.position(tp) < ends.get(tp.partition, 0):
                return False
        return True

    async def polls(
        self, *, to_end: bool, timeout_s: float = 1.0
    ) -> AsyncIterator[list[ChangelogEntry]]:
        """The entries poll by poll: up to the end as it is once the transactions open now
        have ended (``to_end``), or without end."""
        if not to_end:
            while True:
                yield await self.poll(timeout_s)
        settled = await settled_ends(self.kafka, self._consumer, self._parts)
        ends = {tp.partition: offset for tp, offset in settled.items()}
        while not await self.caught_up(ends):
            yield await self.poll(timeout_s)

    async def read_to_end(self, timeout_s: float = 1.0) -> AsyncIterator[ChangelogEntry]:
        """Every entry up to the end as it is once the transactions open now have ended."""
        async for entries in self.polls(to_end=True, timeout_s=timeout_s):
            for entry in entries:
                yield entry

    async def follow(self, timeout_s: float = 1.0) -> AsyncIterator[ChangelogEntry]:
        """Every entry, waiting for new ones without end."""
        async for entries in self.polls(to_end=False, timeout_s=timeout_s):
            for entry in entries:
                yield entry
