"""The namespace placement map: mapped namespaces go to their partition, every other one
where Kafka's default partitioner puts its key; a map that does not fit the topic is refused."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from aiokafka.partitioner import DefaultPartitioner

from factstream.config import Settings
from factstream.streams import producer as producer_module
from factstream.streams.placement import Placement, PlacementError, partition_of
from factstream.streams.producer import TransactionalProducer
from factstream.topics.definitions import TopicName
from factstream.topics.records import Document

PARTS = 12


def _hashed(namespace: str, total: int = PARTS) -> int:
    parts = list(range(total))
    partition: int = DefaultPartitioner()(namespace.encode(), parts, parts)
    return partition


def _elsewhere(namespace: str) -> int:
    return (_hashed(namespace) + 5) % PARTS


def test_a_mapped_namespace_goes_to_its_partition_the_others_are_hashed() -> None:
    placement = Placement({"desk-a": _elsewhere("desk-a")}, PARTS)
    assert placement.partition("desk-a", PARTS) == _elsewhere("desk-a") != _hashed("desk-a")
    for namespace in ("desk-b", "news", "ünï", *(f"n{i}" for i in range(40))):
        assert placement.partition(namespace, PARTS) == _hashed(namespace)
        assert placement.pinned(namespace, PARTS) is None
        assert partition_of(namespace, PARTS) == _hashed(namespace)


def test_the_empty_placement_hashes_everything() -> None:
    assert Placement.load(None) == Placement()
    assert Placement().partition("desk-a", 5) == _hashed("desk-a", 5)


def test_a_map_for_another_partition_count_is_refused_for_its_namespaces() -> None:
    placement = Placement({"desk-a": 3}, PARTS)
    with pytest.raises(PlacementError, match="planned for 12 .* the topic has 16"):
        placement.partition("desk-a", 16)
    assert placement.partition("desk-b", 16) == _hashed("desk-b", 16)


@pytest.mark.parametrize("bad", [-1, PARTS, "3", 2.0])
def test_a_partition_outside_the_topic_is_refused(bad: Any) -> None:
    with pytest.raises(PlacementError, match="desk-a"):
        Placement({"desk-a": bad}, PARTS)


def test_save_then_load_gives_the_same_map(tmp_path: Path) -> None:
    placement = Placement({"b": 2, "a": 11}, PARTS)
    path = tmp_path / "deploy" / "placement.json"
    placement.save(path)
    assert Placement.load(path) == placement
    assert [p.name for p in path.parent.iterdir()] == ["placement.json"]  # no temporary left


def test_a_configured_file_that_is_missing_or_malformed_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(PlacementError, match="does not exist"):
        Placement.load(tmp_path / "absent.json")
    bad = tmp_path / "bad.json"
    for body in (b"{", b"[]", b'{"version": 1, "namespaces": {}}', b'{"version": 2}'):
        bad.write_bytes(body)
        with pytest.raises(PlacementError, match=str(bad)):
            Placement.load(bad)


class _Producer:
    """Records sends; the topic has ``partitions`` partitions."""

    def __init__(self, partitions: int) -> None:
        self.parts = set(range(partitions))
        self.sent: list[tuple[str, bytes | None, int | None]] = []

    async def partitions_for(self, topic: str) -> set[int]:
        return self.parts

    async def send(
        self, topic: str, value: bytes, *, key: bytes | None, partition: int | None
    ) -> None:
        self.sent.append((topic, key, partition))

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[None]:
        yield


def _doc(namespace: str) -> Document:
    return Document.model_validate(
        {
            "namespace": namespace,
            "kind": "article",
            "timestamp": "2026-01-01T00:00:00Z",
            "text": "x",
        }
    )


async def test_the_transactional_producer_places_documents_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "placement.json"
    Placement({"desk-a": _elsewhere("desk-a")}, PARTS).save(path)
    kafka = Settings.from_env(
        {"FACTSTREAM_KAFKA_PLACEMENT_FILE": str(path), "FACTSTREAM_KAFKA_TOPIC_PREFIX": "t."}
    ).kafka
    fake = _Producer(PARTS)
    monkeypatch.setattr(producer_module, "AIOKafkaProducer", lambda **kwargs: fake)
    sender = TransactionalProducer(kafka, "unit", "unit-txn")
    records = [
        (TopicName.DOCUMENTS, b"desk-a", _doc("desk-a")),
        (TopicName.DOCUMENTS, b"desk-b", _doc("desk-b")),
        (TopicName.REVIEW, b"desk-a", _doc("desk-a")),
    ]
    await sender.send_atomically(records)
    assert fake.sent == [
        ("t.factstream.documents", b"desk-a", _elsewhere("desk-a")),
        ("t.factstream.documents", b"desk-b", None),  # the producer's murmur2 hashes it
        ("t.factstream.documents.review", b"desk-a", None),
    ]


async def test_a_producer_configured_with_a_missing_map_does_not_start(tmp_path: Path) -> None:
    kafka = Settings.from_env({"FACTSTREAM_KAFKA_PLACEMENT_FILE": str(tmp_path / "no.json")}).kafka
    with pytest.raises(PlacementError):
        TransactionalProducer(kafka, "unit", "unit-txn")
