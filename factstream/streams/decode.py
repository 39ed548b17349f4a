"""Decode input records strictly; anything unusable becomes BadInput with an actionable reason."""

from __future__ import annotations

import json
from typing import Any

import orjson
from pydantic import ValidationError

from factstream.errors import BadInput
from factstream.topics.records import Document

__all__ = ["decode_document", "describe_validation_error"]


def describe_validation_error(exc: ValidationError) -> str:
    """One line per problem: 'field: message'."""
    parts = []
    for err in exc.errors(include_url=False, include_input=False):
        where = ".".join(str(p) for p in err["loc"]) or "record"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise BadInput(
                f"duplicate key {key[:60]!r} in a JSON object "
                "(readers disagree on which one counts)"
            )
        seen.add(key)
    return dict(pairs)


def _refuse_duplicate_keys(value: bytes) -> None:
    # orjson keeps the last of duplicated keys silently; another reader may take the first.
    json.loads(value, object_pairs_hook=_unique_pairs)


def decode_document(key: bytes | None, value: bytes | None, *, max_bytes: int) -> Document:
    """Parse one ``factstream.documents`` record.

    Args:
        key: the record key; it must be the document's namespace (it decides the partition,
            and so the order in which a namespace's documents are applied).
        value: the raw value bytes.
        max_bytes: the largest value accepted.

    Raises:
        BadInput: with the reason, for every way the record can be unusable.
    """
    if not value:
        raise BadInput("empty record value")
    if len(value) > max_bytes:
        raise BadInput(
            f"document of {len(value)} bytes exceeds the limit of {max_bytes} "
            "(FACTSTREAM_WORKER_MAX_DOCUMENT_BYTES)"
        )
    try:
        value.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(f"value is not UTF-8: {exc}") from exc
    try:
        data = orjson.loads(value)
    except orjson.JSONDecodeError as exc:
        raise BadInput(f"value is not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise BadInput(f"a JSON object was expected, got {type(data).__name__}")
    _refuse_duplicate_keys(value)
    try:
        doc = Document.model_validate(data)
    except ValidationError as exc:
        raise BadInput(f"invalid document: {describe_validation_error(exc)}") from exc
    if key != doc.namespace.encode():
        raise BadInput(
            f"record key {key!r} is not the document's namespace {doc.namespace!r}; "
            "documents must be keyed by namespace to be applied in order"
        )
    return doc
