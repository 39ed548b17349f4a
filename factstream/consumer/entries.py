"""What one changelog record is to a consumer: an edit, a tombstone, a version it does not
know, or a record it cannot read (docs/consuming.md).

A record of a schema version newer than this reader knows is surfaced as ``UnknownVersion``
with its bytes, never parsed by guesswork and never a crash: the consumer decides (the
PostgreSQL mirror dead-letters it with the reason, and the rest flows).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import orjson
from pydantic import ValidationError

from factstream.streams.decode import describe_validation_error
from factstream.topics.records import FactEdit, accepted_versions

__all__ = [
    "KNOWN_VERSIONS",
    "ChangelogEntry",
    "Malformed",
    "Payload",
    "Tombstone",
    "UnknownVersion",
    "decode_payload",
]

KNOWN_VERSIONS: tuple[int, ...] = accepted_versions(FactEdit)


@dataclass(frozen=True)
class Tombstone:
    """A record with no value (a deletion marker for its key); the changelog writes none."""


@dataclass(frozen=True)
class UnknownVersion:
    """A FactEdit of a schema version this reader does not know (a newer producer)."""

    version: int
    raw: bytes
    namespace: str | None

    @property
    def reason(self) -> str:
        known = ", ".join(map(str, KNOWN_VERSIONS))
        return f"schema_version {self.version} is unknown to this reader (it reads {known})"


@dataclass(frozen=True)
class Malformed:
    """A record that is no FactEdit of a known version: not JSON, or invalid; with why."""

    raw: bytes
    reason: str


Payload = FactEdit | Tombstone | UnknownVersion | Malformed


@dataclass(frozen=True)
class ChangelogEntry:
    """One changelog record as read: where it is, its key, and what it holds."""

    partition: int
    offset: int
    timestamp: datetime
    key: str | None
    payload: Payload

    @property
    def edit(self) -> FactEdit | None:
        """The edit, when the record is one of a known version."""
        return self.payload if isinstance(self.payload, FactEdit) else None

    @property
    def namespace(self) -> str | None:
        """The namespace the record names (None: a tombstone, or a record that names none)."""
        if isinstance(self.payload, FactEdit | UnknownVersion):
            return self.payload.namespace
        return None


def decode_payload(value: bytes | None) -> Payload:
    """Read one changelog value; never raises."""
    if value is None:
        return Tombstone()
    try:
        data = orjson.loads(value)
    except orjson.JSONDecodeError as exc:
        return Malformed(value, f"value is not valid JSON: {exc}")
    if not isinstance(data, dict):
        return Malformed(value, f"a JSON object was expected, got {type(data).__name__}")
    version = data.get("schema_version")
    if isinstance(version, int) and not isinstance(version, bool) and version > max(KNOWN_VERSIONS):
        namespace = data.get("namespace")
        return UnknownVersion(version, value, namespace if isinstance(namespace, str) else None)
    try:
        return FactEdit.model_validate(data)
    except ValidationError as exc:
        return Malformed(value, f"invalid FactEdit: {describe_validation_error(exc)}")
