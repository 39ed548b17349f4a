"""``factstream changelog tail``'s output: one line per entry, for people or as JSON."""

from __future__ import annotations

import base64

import orjson

from factstream.consumer.entries import ChangelogEntry, Malformed, Tombstone, UnknownVersion
from factstream.topics.records import EditOp

__all__ = ["entry_json", "entry_line"]


def _when(entry: ChangelogEntry) -> str:
    edit = entry.edit
    stamp = edit.event_time if edit is not None else entry.timestamp
    return stamp.isoformat().replace("+00:00", "Z")


def entry_line(entry: ChangelogEntry) -> str:
    """``event-time namespace op truth fact-id text``, then where it was read."""
    where = f"[{entry.partition}@{entry.offset}]"
    payload = entry.payload
    if isinstance(payload, Tombstone):
        return f"{_when(entry)} tombstone key={entry.key} {where}"
    if isinstance(payload, UnknownVersion):
        namespace = payload.namespace or "-"
        return f"{_when(entry)} {namespace} UNKNOWN VERSION: {payload.reason} {where}"
    if isinstance(payload, Malformed):
        return f"{_when(entry)} - MALFORMED: {payload.reason} {where}"
    edit = payload
    text = edit.text
    if edit.op is EditOp.REWRITE:
        text = f"{edit.previous_text!r} -> {edit.text!r}"
    elif edit.op is EditOp.CLOSE and edit.valid_to is not None:
        text = f"{edit.text!r} held until {edit.valid_to.isoformat()}"
    else:
        text = repr(text)
    truth = "true" if edit.truth else "false"
    return (
        f"{_when(entry)} {edit.namespace} {edit.op.value} {truth} {edit.fact_id} {text} "
        f"(document {edit.document_id}) {where}"
    )


def entry_json(entry: ChangelogEntry) -> str:
    """An edit's wire record as is (the record contract); anything else described."""
    payload = entry.payload
    if entry.edit is not None:
        return entry.edit.to_bytes().decode()
    body: dict[str, object] = {"partition": entry.partition, "offset": entry.offset}
    if isinstance(payload, Tombstone):
        body |= {"kind": "tombstone", "key": entry.key}
    elif isinstance(payload, UnknownVersion):
        body |= {
            "kind": "unknown_version",
            "schema_version": payload.version,
            "reason": payload.reason,
            "value": base64.b64encode(payload.raw).decode(),
        }
    elif isinstance(payload, Malformed):
        body |= {
            "kind": "malformed",
            "reason": payload.reason,
            "value": base64.b64encode(payload.raw).decode(),
        }
    return orjson.dumps(body).decode()
