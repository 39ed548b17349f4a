"""A commit's tally counts its own work and the tasks it starts, never another task's."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest

from factstream.config import Settings
from factstream.embed.cache import CachedEmbedder
from factstream.embed.fake import HashingEmbedder
from factstream.streams import producer as producer_module
from factstream.streams.producer import TransactionalProducer
from factstream.tally import Tally, count, counting, line
from factstream.topics.definitions import TopicName
from factstream.topics.records import Document

T0 = datetime(2024, 3, 1, tzinfo=UTC)


async def test_work_of_started_tasks_counts_and_work_of_other_tasks_does_not() -> None:
    other_may_count = asyncio.Event()

    async def other() -> None:  # started before the tally opened: not its work
        await other_may_count.wait()
        count("weaviate_read", 5)

    outside = asyncio.create_task(other())
    tally: Tally = Counter()
    with counting(tally):
        count("weaviate_read")
        await asyncio.gather(_child(), asyncio.create_task(_child()))
        other_may_count.set()
        await outside
    count("weaviate_write")  # after the block: not counted
    assert tally == Counter({"weaviate_read": 1, "weaviate_write": 2})
    assert line(tally) == "weaviate_read=1 weaviate_write=2"


async def _child() -> None:
    await asyncio.sleep(0)
    count("weaviate_write")


async def test_the_embedder_cache_counts_what_reached_the_model() -> None:
    embedder = CachedEmbedder(HashingEmbedder(), questions=0, texts=10)
    await embedder.embed_batch(["a"])
    tally: Tally = Counter()
    with counting(tally):
        await embedder.embed_batch(["a", "b", "b"])
    assert tally == Counter({"embed_cached": 2, "embed_model": 1})


class _Client:
    async def send(self, *_: Any) -> None:
        return None


class _Producer:
    """A transactional producer's double: each send and the commit are one request."""

    def __init__(self, **_: Any) -> None:
        self.client = _Client()

    async def send(self, *_: Any, **__: Any) -> None:
        await self.client.send("Produce")

    @contextlib.asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        await self.client.send("AddPartitionsToTxn")
        yield
        await self.client.send("EndTxn")


async def test_the_requests_of_a_counted_transaction_count_and_others_do_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(producer_module, "AIOKafkaProducer", _Producer)
    sender = TransactionalProducer(Settings().kafka, "unit", "unit-txn")
    record = Document(id="d", namespace="ns", kind="article", text="x", timestamp=T0)  # type: ignore[arg-type]
    await sender.send_atomically([(TopicName.REVIEW, b"ns", record)])  # not counted
    tally: Tally = Counter()
    with counting(tally):
        await sender.send_atomically([(TopicName.REVIEW, b"ns", record)] * 2)
    assert tally == Counter({"kafka": 4})


async def test_a_patch_of_the_client_class_still_sees_the_requests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The benchmarks count broker requests by patching the client's class after the
    publisher is made (bench/counting.py): the producer's counter must not bypass it."""
    monkeypatch.setattr(producer_module, "AIOKafkaProducer", _Producer)
    sender = TransactionalProducer(Settings().kafka, "unit", "unit-txn")
    seen: list[Any] = []

    async def patched(self: _Client, *args: Any) -> None:
        seen.append(args[0])

    monkeypatch.setattr(_Client, "send", patched)
    record = Document(id="d", namespace="ns", kind="article", text="x", timestamp=T0)  # type: ignore[arg-type]
    await sender.send_atomically([(TopicName.REVIEW, b"ns", record)])
    assert seen == ["AddPartitionsToTxn", "Produce", "EndTxn"]
