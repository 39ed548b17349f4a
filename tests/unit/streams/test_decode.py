"""Every kind of bad input is refused with a reason; good input decodes."""

from __future__ import annotations

import orjson
import pytest

from factstream.errors import BadInput
from factstream.streams.decode import decode_document

GOOD = {
    "namespace": "desk",
    "kind": "article",
    "timestamp": "2024-03-01T12:00:00Z",
    "text": "The bridge reopened on Monday.",
}


def _bytes(**changes: object) -> bytes:
    return orjson.dumps({**GOOD, **changes})


def test_good_document_decodes() -> None:
    doc = decode_document(b"desk", _bytes(), max_bytes=10_000)
    assert doc.namespace == "desk" and doc.id.startswith("sha256-")


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        (b"desk", b"", "empty record value"),
        (b"desk", None, "empty record value"),
        (b"desk", b"\xff\xfe\x00garbage", "not UTF-8"),
        (b"desk", b'{"namespace": "desk", ', "not valid JSON"),
        (b"desk", b"[1, 2]", "JSON object was expected, got list"),
        (
            b"desk",
            orjson.dumps({k: v for k, v in GOOD.items() if k != "text"}),
            "text: Field required",
        ),
        (b"desk", _bytes(timestamp="yesterday"), "timestamp: Input should be a valid datetime"),
        (b"desk", _bytes(timestamp="2024-03-01T12:00:00"), "timestamp: Input should have timezone"),
        (b"desk", _bytes(timestamp="2024-02-30T12:00:00Z"), "timestamp: Input should be a valid"),
        (b"desk", _bytes(kind=3), "kind: Input should be 'article' or 'conversation'"),
        (b"desk", _bytes(text=""), "text: String should have at least 1 character"),
        (b"desk", _bytes(text="   \n"), "text: Value error, has nothing visible"),
        (b"desk", _bytes(text="\u200b\ufeff\x00"), "text: Value error, has nothing visible"),
        (b"desk", _bytes(id=""), "id: String should have at least 1 character"),
        (b"desk", _bytes(id=0), "id: Input should be a valid string"),
        (b"desk", _bytes(timestamp=1700000000), "timestamp: Value error, an RFC 3339"),
        (b"desk", _bytes(timestamp="1700000000"), "not an RFC 3339 date-time"),
        (b"desk", _bytes(timestamp="2024-03-01T12:00Z"), "not an RFC 3339 date-time"),
        (b"desk", b'{"namespace": "other", ' + _bytes()[1:], "duplicate key 'namespace'"),
        (b"bad ns!", _bytes(namespace="bad ns!"), "namespace: String should match pattern"),
        (b"other", _bytes(), "is not the document's namespace 'desk'"),
        (None, _bytes(), "record key None is not the document's namespace"),
        (b"desk", _bytes(text="x" * 5000), "exceeds the limit of 4096"),
    ],
)
def test_bad_input_is_refused_with_its_reason(
    key: bytes | None, value: bytes | None, reason: str
) -> None:
    with pytest.raises(BadInput) as info:
        decode_document(key, value, max_bytes=4096)
    assert reason in info.value.reason
