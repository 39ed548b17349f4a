"""The namespace placement map: which documents partition each namespace goes to.

Documents are keyed by namespace, so Kafka's default partitioner (murmur2 of the key, as
aiokafka and the Java client compute it) keeps a namespace's documents on one partition, in
order. Hashing spreads namespaces, not documents: with a few busy namespaces, one partition
(and the worker that owns it) gets far more documents than another. A placement map
(``FACTSTREAM_KAFKA_PLACEMENT_FILE``, written by ``factstream placement plan``) pins chosen
namespaces to chosen partitions; every other namespace is hashed as before.

Every factstream publisher applies the map here (``Placement.for_send``, used by the
transactional producer and the benchmarks' plain one). The rule that keeps per-namespace
order: a namespace's partition must not change while documents of it are unread.

The file (JSON)::

    {"version": 1, "partitions": 12, "namespaces": {"desk-a": 3, "desk-b": 7}}

``partitions`` is the documents topic's partition count the map was planned for; a topic
with another count is refused (a namespace would move), never silently hashed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from aiokafka import AIOKafkaProducer
from aiokafka.partitioner import murmur2

from factstream.errors import FactstreamError

__all__ = ["Placement", "PlacementError", "partition_of"]

_VERSION = 1


class PlacementError(FactstreamError):
    """The placement map cannot be read, does not validate, or does not fit the topic."""


def partition_of(namespace: str, partitions: int) -> int:
    """The partition Kafka's default partitioner (murmur2, as aiokafka and Java) gives a key."""
    hashed: int = murmur2(namespace.encode())
    return (hashed & 0x7FFFFFFF) % partitions


@dataclass(frozen=True)
class Placement:
    """Namespaces pinned to partitions of a topic with ``partitions`` partitions.

    The empty placement (no file configured) pins nothing: every namespace is hashed.
    """

    namespaces: Mapping[str, int] = field(default_factory=dict)
    partitions: int | None = None

    def __post_init__(self) -> None:
        if self.namespaces and self.partitions is None:
            raise PlacementError("a placement map names its topic's partition count")
        count = self.partitions or 0
        for namespace, partition in self.namespaces.items():
            if not isinstance(partition, int) or not 0 <= partition < count:
                raise PlacementError(
                    f"namespace {namespace!r}: partition {partition!r} is not one of 0..{count - 1}"
                )

    @classmethod
    def load(cls, path: Path | None) -> Placement:
        """The map at ``path``; the empty placement when no file is configured.

        A configured file that is missing is an error: publishing by hash instead would put
        the mapped namespaces' next documents on other partitions than their unread ones.
        """
        if path is None:
            return cls()
        try:
            raw: Any = orjson.loads(path.read_bytes())
        except FileNotFoundError as exc:
            raise PlacementError(f"placement file {path} does not exist") from exc
        except (OSError, orjson.JSONDecodeError) as exc:
            raise PlacementError(f"placement file {path} cannot be read: {exc}") from exc
        if not isinstance(raw, dict) or raw.get("version") != _VERSION:
            raise PlacementError(f"placement file {path}: not a version {_VERSION} map")
        namespaces, partitions = raw.get("namespaces"), raw.get("partitions")
        if not isinstance(namespaces, dict) or not isinstance(partitions, int) or partitions < 1:
            raise PlacementError(f"placement file {path}: needs partitions and namespaces")
        return cls(dict(namespaces), partitions)

    def save(self, path: Path) -> None:
        """Write the map atomically (a publisher starting meanwhile reads old or new)."""
        body = {
            "version": _VERSION,
            "partitions": self.partitions,
            "namespaces": dict(sorted(self.namespaces.items())),
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_bytes(orjson.dumps(body, option=orjson.OPT_INDENT_2) + b"\n")
        temporary.replace(path)

    def pinned(self, namespace: str, partitions: int) -> int | None:
        """The namespace's mapped partition on a topic of ``partitions``; None if unmapped.

        Raises:
            PlacementError: the map was planned for another partition count.
        """
        if namespace not in self.namespaces:
            return None
        if partitions != self.partitions:
            raise PlacementError(
                f"the placement map was planned for {self.partitions} documents partitions, "
                f"the topic has {partitions}: plan it again (factstream placement plan --move) "
                "once the documents are read"
            )
        return self.namespaces[namespace]

    def partition(self, namespace: str, partitions: int) -> int:
        """Where the namespace's documents go: its mapped partition, else its key's hash."""
        pinned = self.pinned(namespace, partitions)
        return partition_of(namespace, partitions) if pinned is None else pinned

    async def for_send(
        self, producer: AIOKafkaProducer, topic: str, key: bytes | None
    ) -> int | None:
        """The partition to give ``producer.send`` for a document keyed ``key`` on ``topic``:
        the mapped one, or None (the producer's default partitioner hashes the key)."""
        if key is None or not self.namespaces:
            return None
        namespace = key.decode()
        if namespace not in self.namespaces:
            return None
        return self.pinned(namespace, len(await producer.partitions_for(topic)))
