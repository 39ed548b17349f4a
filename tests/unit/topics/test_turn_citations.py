"""Citations down to the turn: turn ids (Document version 3), the turns a fact was said in
(FactEdit version 4, Fact version 3, Answer version 5), and records written before them."""

from __future__ import annotations

from typing import Any

import jsonschema
import orjson
import pytest
from pydantic import ValidationError

from factstream.edit.apply import apply_edits
from factstream.topics.records import (
    Answer,
    AnswerFact,
    Document,
    Fact,
    FactEdit,
    Record,
    accepted_versions,
)
from factstream.topics.schemas import json_schema

# Stored bytes exactly as the previous release wrote them: a version-3 edit (said_by, no
# turns), the version-2 fact it made, a version-2 chunk (turns without ids).
V3_EDIT = (
    b'{"schema_version":3,"edit_id":"5b0c7a52-3f7e-5d0a-9a47-0c1f8e2d6b13","namespace":'
    b'"world-1","fact_id":"8f3e2d1c-4b5a-5c6d-9e8f-7a6b5c4d3e2f","op":"add","text":'
    b'"Ana Silva lives in Lisbon.","truth":true,"event_time":"2024-03-01T09:00:00Z",'
    b'"document_id":"w1-c001-1","batch":{"id":"w1-c001-1@3c9a1f0e2b7d4a65","size":1,'
    b'"position":0},"input":{"topic":"factstream.documents","partition":0,"offset":12},'
    b'"decided_by":{"model":"smollm2","prompt_version":"extract_facts.v3"},'
    b'"created_at":"2024-03-01T09:00:04Z","valid_from":"2024-03-01T09:00:00Z",'
    b'"said_by":"Ana Silva"}'
)
V2_FACT = (
    b'{"schema_version":2,"fact_id":"8f3e2d1c-4b5a-5c6d-9e8f-7a6b5c4d3e2f","namespace":'
    b'"world-1","text":"Ana Silva lives in Lisbon.","truth":true,"history":[{"ts":'
    b'"2024-03-01T09:00:00Z","truth":true,"document_id":"w1-c001-1","edit_id":'
    b'"5b0c7a52-3f7e-5d0a-9a47-0c1f8e2d6b13"}],"first_seen":"2024-03-01T09:00:00Z",'
    b'"last_changed":"2024-03-01T09:00:00Z","valid_from":"2024-03-01T09:00:00Z"}'
)
V2_CHUNK = (
    b'{"schema_version":2,"id":"w1-c001-1","namespace":"world-1","kind":"conversation",'
    b'"timestamp":"2024-03-01T09:00:00Z","text":"Ben Okafor: Hi Ana!\\nAna Silva: I moved.",'
    b'"metadata":{},"turns":[{"speaker":"Ben Okafor","text":"Hi Ana!"},'
    b'{"speaker":"Ana Silva","text":"I moved."}]}'
)
CHUNK: dict[str, Any] = {
    "namespace": "world-1",
    "kind": "conversation",
    "timestamp": "2024-03-01T09:00:00Z",
    "turns": [
        {"speaker": "Ben Okafor", "text": "Hi Ana!", "id": "D1:1"},
        {"speaker": "Ana Silva", "text": "I moved to Lisbon.", "id": "D1:2"},
    ],
}


def _edit(**overrides: Any) -> dict[str, Any]:
    base = orjson.loads(V3_EDIT)
    base.pop("schema_version")
    return {**base, **overrides}


def _schema_accepts(model: type[Record], record: Record) -> None:
    jsonschema.validate(orjson.loads(record.to_bytes()), json_schema(model))


def test_turns_are_known_by_their_own_ids_else_by_their_positions() -> None:
    doc = Document.model_validate(CHUNK)
    assert doc.schema_version == 3 and doc.turn_ids == ["D1:1", "D1:2"]
    assert Document.from_bytes(doc.to_bytes()) == doc
    _schema_accepts(Document, doc)
    bare = [{k: v for k, v in t.items() if k != "id"} for t in CHUNK["turns"]]
    assert Document.model_validate({**CHUNK, "turns": bare}).turn_ids == ["1", "2"]
    mixed = [bare[0], CHUNK["turns"][1]]
    assert Document.model_validate({**CHUNK, "turns": mixed}).turn_ids == ["1", "D1:2"]


@pytest.mark.parametrize(
    ("turns", "message"),
    [
        ([{"id": "D1:1"}, {"id": "D1:1"}], "unique in a document: D1:1"),
        ([{"id": "2"}, {}], "unique in a document: 2"),  # collides with the second's position
        ([{"id": "D1 1"}, {}], "should match pattern"),
        ([{"id": ""}, {}], "should match pattern"),
    ],
)
def test_turn_ids_that_cannot_be_cited_are_refused(
    turns: list[dict[str, str]], message: str
) -> None:
    said = [{"speaker": "Ana Silva", "text": "Hi.", **t} for t in turns]
    with pytest.raises(ValidationError, match=message):
        Document.model_validate({**CHUNK, "turns": said})


def test_turn_ids_need_document_version_3_and_older_chunks_still_read() -> None:
    with pytest.raises(ValidationError, match="turn ids need schema version 3"):
        Document.model_validate({**CHUNK, "schema_version": 2})
    old = Document.from_bytes(V2_CHUNK)
    assert old.schema_version == 2 and old.turn_ids == ["1", "2"]
    assert orjson.loads(old.to_bytes()) == orjson.loads(V2_CHUNK)


def test_an_edit_cites_turns_from_version_4_on_adds_and_rewrites_only() -> None:
    edit = FactEdit.model_validate(_edit(turn_ids=["D1:2", "D1:5"]))
    assert edit.schema_version == 4 and edit.turn_ids == ["D1:2", "D1:5"]
    assert FactEdit.from_bytes(edit.to_bytes()) == edit
    _schema_accepts(FactEdit, edit)
    with pytest.raises(ValidationError, match="turn_ids need schema version 4"):
        FactEdit.model_validate(_edit(turn_ids=["D1:2"], schema_version=3))
    with pytest.raises(ValidationError, match="of op reinforce cites no turns"):
        FactEdit.model_validate(
            _edit(turn_ids=["D1:2"], op="reinforce", said_by=None, valid_from=None)
        )
    with pytest.raises(ValidationError, match="cited twice"):
        FactEdit.model_validate(_edit(turn_ids=["D1:2", "D1:2"]))
    with pytest.raises(ValidationError, match="at least 1"):
        FactEdit.model_validate(_edit(turn_ids=[]))
    # The published schema refuses what the model refuses.
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(
            {**orjson.loads(edit.to_bytes()), "turn_ids": []}, json_schema(FactEdit)
        )


def test_a_stored_version_3_edit_reads_and_applies_to_a_fact_without_turns() -> None:
    old = FactEdit.from_bytes(V3_EDIT)
    assert old.schema_version == 3 and old.turn_ids is None and old.said_by == "Ana Silva"
    assert orjson.loads(old.to_bytes()) == orjson.loads(V3_EDIT)
    jsonschema.validate(orjson.loads(V3_EDIT), json_schema(FactEdit))
    fact = apply_edits({}, [old]).changed[old.fact_id]
    assert fact.turn_ids is None and "turn_ids" not in orjson.loads(fact.to_bytes())


def test_a_stored_version_2_fact_reads_and_a_fact_carries_its_edits_turns() -> None:
    stored = Fact.from_bytes(V2_FACT)
    assert stored.schema_version == 2 and stored.turn_ids is None
    assert orjson.loads(stored.to_bytes()) == orjson.loads(V2_FACT)
    with pytest.raises(ValidationError, match="turn_ids need schema version 3"):
        Fact.model_validate({**orjson.loads(V2_FACT), "turn_ids": ["1"]})
    edit = FactEdit.model_validate(_edit(turn_ids=["D1:2"]))
    fact = apply_edits({}, [edit]).changed[edit.fact_id]
    assert fact.schema_version == max(accepted_versions(Fact)) and fact.turn_ids == ["D1:2"]
    assert Fact.from_bytes(fact.to_bytes()) == fact
    _schema_accepts(Fact, fact)
    # Applying again (a replay) changes nothing; a later reinforcement keeps the turns.
    assert apply_edits({fact.fact_id: fact}, [edit]).changed == {}
    again = _edit(
        op="reinforce",
        said_by=None,
        valid_from=None,
        edit_id="e2",
        document_id="w1-c002-1",
        event_time="2024-03-02T09:00:00Z",
    )
    reinforced = apply_edits({fact.fact_id: fact}, [FactEdit.model_validate(again)])
    assert reinforced.changed[fact.fact_id].turn_ids == ["D1:2"]
    assert reinforced.changed[fact.fact_id].history[0].document_id == "w1-c001-1"


def test_an_answer_cites_its_facts_turns_from_version_5() -> None:
    fact = AnswerFact(
        fact_id="f1",
        text="Ana Silva lives in Lisbon.",
        truth=True,
        history=Fact.from_bytes(V2_FACT).history,
        score=0.9,
        turn_ids=["D1:2"],
    )
    answer = Answer(question_id="q", namespace="world-1", facts=[fact])
    assert answer.schema_version == 5 and Answer.from_bytes(answer.to_bytes()) == answer
    _schema_accepts(Answer, answer)
    with pytest.raises(ValidationError, match="turn_ids need schema version 5"):
        Answer.model_validate({**orjson.loads(answer.to_bytes()), "schema_version": 4})
