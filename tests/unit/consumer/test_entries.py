"""Changelog records decode to an edit, a tombstone, an unknown version or a malformed one."""

from __future__ import annotations

from datetime import UTC, datetime

import orjson
from fixtures.changelog_stream import synthetic_batches

from factstream.consumer import (
    KNOWN_VERSIONS,
    ChangelogEntry,
    Malformed,
    Tombstone,
    UnknownVersion,
    decode_payload,
)
from factstream.consumer.tail import entry_json, entry_line
from factstream.topics.records import FactEdit

EDIT = synthetic_batches(["desk"], 1)[0][0]


def _entry(value: bytes | None) -> ChangelogEntry:
    return ChangelogEntry(3, 41, datetime(2024, 1, 1, tzinfo=UTC), "k", decode_payload(value))


def test_a_known_version_is_an_edit() -> None:
    for version in KNOWN_VERSIONS:
        raw = orjson.dumps({**orjson.loads(EDIT.to_bytes()), "schema_version": version})
        assert decode_payload(raw) == EDIT.model_copy(update={"schema_version": version})


def test_a_newer_version_is_surfaced_with_its_bytes_not_parsed() -> None:
    newer = max(KNOWN_VERSIONS) + 1
    raw = orjson.dumps({**orjson.loads(EDIT.to_bytes()), "schema_version": newer, "new": [1]})
    payload = decode_payload(raw)
    assert payload == UnknownVersion(newer, raw, "desk")
    assert f"schema_version {newer} is unknown" in payload.reason
    assert _entry(raw).namespace == "desk" and _entry(raw).edit is None


def test_tombstones_and_unreadable_records_never_raise() -> None:
    assert decode_payload(None) == Tombstone()
    bad_json = decode_payload(b"{nope")
    assert isinstance(bad_json, Malformed) and "not valid JSON" in bad_json.reason
    not_object = decode_payload(b"[1]")
    assert isinstance(not_object, Malformed) and "JSON object" in not_object.reason
    invalid = decode_payload(orjson.dumps({**orjson.loads(EDIT.to_bytes()), "op": "nope"}))
    assert isinstance(invalid, Malformed) and invalid.reason.startswith("invalid FactEdit: op")


def test_tail_json_is_the_wire_record_and_lines_say_what_they_are() -> None:
    entry = _entry(EDIT.to_bytes())
    assert FactEdit.from_bytes(entry_json(entry).encode()) == EDIT
    assert entry_line(entry).startswith(f"2024-01-01T01:00:00Z desk add true {EDIT.fact_id} ")
    assert entry_line(entry).endswith("[3@41]")
    unknown = orjson.loads(entry_json(_entry(b'{"schema_version": 9, "namespace": "x"}')))
    assert unknown["kind"] == "unknown_version" and unknown["schema_version"] == 9
    assert "tombstone key=k" in entry_line(_entry(None))
