"""Conversation chunks (Document version 2, turns) and who said a fact (FactEdit version 3)."""

from __future__ import annotations

from typing import Any

import jsonschema
import orjson
import pytest
from pydantic import ValidationError

from factstream.topics.records import Document, FactEdit, Turn, render_turns
from factstream.topics.schemas import json_schema

CHUNK: dict[str, Any] = {
    "namespace": "world-1",
    "kind": "conversation",
    "timestamp": "2024-03-01T09:00:00Z",
    "turns": [
        {"speaker": "Ana Silva", "text": "I moved to Lisbon last month."},
        {"speaker": "Ben Okafor", "text": "You did? Do you like it?"},
        {"speaker": "Ana Silva", "text": "I love it."},
    ],
}
# A version-1 document as the package wrote it before turns.
V1_DOCUMENT = (
    b'{"schema_version":1,"id":"d1","namespace":"desk","kind":"article",'
    b'"timestamp":"2024-03-01T09:00:00Z","text":"Acme names a new chief.","metadata":{}}'
)


def test_a_chunk_without_text_gets_its_turns_as_text_and_a_content_id() -> None:
    doc = Document.model_validate(CHUNK)
    assert doc.schema_version == 3 and doc.turns is not None and len(doc.turns) == 3
    assert doc.text.splitlines() == [
        "Ana Silva: I moved to Lisbon last month.",
        "Ben Okafor: You did? Do you like it?",
        "Ana Silva: I love it.",
    ]
    assert doc.speakers == ["Ana Silva", "Ben Okafor"]
    assert doc.id.startswith("sha256-")
    assert Document.from_bytes(doc.to_bytes()) == doc
    jsonschema.validate(CHUNK, json_schema(Document))


def test_a_chunk_may_carry_text_beside_its_turns() -> None:
    doc = Document.model_validate({**CHUNK, "text": "Ana tells Ben about Lisbon."})
    assert doc.text == "Ana tells Ben about Lisbon." and doc.turns is not None


def test_version_1_documents_still_read() -> None:
    doc = Document.from_bytes(V1_DOCUMENT)
    assert doc.schema_version == 1 and doc.turns is None
    assert orjson.loads(doc.to_bytes()) == orjson.loads(V1_DOCUMENT)
    jsonschema.validate(orjson.loads(V1_DOCUMENT), json_schema(Document))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"kind": "article"}, "only a conversation carries turns"),
        ({"schema_version": 1}, "turns need schema version 2"),
        ({"turns": []}, "at least 1"),
        ({"turns": [{"speaker": "Ana", "text": " \u200b"}]}, "nothing visible"),
        ({"turns": [{"speaker": "", "text": "Hi"}]}, "at least 1 character"),
        ({"turns": [{"speaker": "Ana", "text": "Hi", "to": "Ben"}]}, "Extra inputs"),
    ],
)
def test_bad_chunks_are_refused(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Document.model_validate({**CHUNK, **change})


def test_the_schema_wants_text_or_turns() -> None:
    bare = {k: v for k, v in CHUNK.items() if k != "turns"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bare, json_schema(Document))
    with pytest.raises(ValidationError):
        Document.model_validate(bare)


def test_render_turns_is_one_line_per_turn() -> None:
    turns = [Turn(speaker="A", text="x"), Turn(speaker="B", text="y")]
    assert render_turns(turns) == "A: x\nB: y"


def _edit(**overrides: Any) -> dict[str, Any]:
    base = {
        "edit_id": "e1",
        "namespace": "world-1",
        "fact_id": "f1",
        "op": "add",
        "text": "Ana Silva lives in Lisbon.",
        "truth": True,
        "event_time": "2024-03-01T09:00:00Z",
        "document_id": "d1",
        "batch": {"id": "d1@x", "size": 1, "position": 0},
        "input": {"topic": "factstream.documents", "partition": 0, "offset": 3},
        "decided_by": {"model": "m", "prompt_version": "extract_facts.v3"},
        "created_at": "2024-03-01T09:00:01Z",
    }
    return {**base, **overrides}


def test_said_by_is_kept_and_needs_version_3() -> None:
    edit = FactEdit.model_validate(_edit(said_by="Ana Silva"))
    assert edit.schema_version == 4 and edit.said_by == "Ana Silva"
    assert FactEdit.from_bytes(edit.to_bytes()) == edit
    jsonschema.validate(orjson.loads(edit.to_bytes()), json_schema(FactEdit))
    with pytest.raises(ValidationError, match="said_by needs schema version 3"):
        FactEdit.model_validate(_edit(said_by="Ana Silva", schema_version=2))
    with pytest.raises(ValidationError, match="says no speaker"):
        FactEdit.model_validate(_edit(said_by="Ana Silva", op="reinforce", fact_id="f0"))
    # Version 2 edits (no speaker) still read.
    assert FactEdit.model_validate(_edit(schema_version=2)).said_by is None
