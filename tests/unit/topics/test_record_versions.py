"""Schema versions: version-1 records still read; valid time, close and change are checked."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import jsonschema
import orjson
import pytest
from pydantic import ValidationError

from factstream.topics.records import (
    Answer,
    AnswerHop,
    ChangeKind,
    Document,
    EditOp,
    Fact,
    FactEdit,
    Question,
    TimePlanNote,
    ValidTimeSource,
    ValidWindow,
    accepted_versions,
)
from factstream.topics.schemas import json_schema

T0 = datetime(2023, 9, 1, tzinfo=UTC)
T1 = datetime(2024, 1, 1, tzinfo=UTC)

# Bytes exactly as version 1 of the package wrote them (no valid time, no change).
V1_EDIT = (
    b'{"schema_version":1,"edit_id":"0b7f7c3e-8a4e-5a51-9d8f-1f4f0c2b7c11","namespace":"desk",'
    b'"fact_id":"5d1c2a7e-1b7f-5f0e-8c2d-3a4b5c6d7e8f","op":"rewrite",'
    b'"text":"Mike Lawler is a United States representative.",'
    b'"previous_text":"Mike Lawler is a member of the New York State Assembly.",'
    b'"replaces":"9a8b7c6d-5e4f-5a3b-8c2d-1e0f9a8b7c6d","truth":true,'
    b'"event_time":"2023-09-01T00:00:00Z","document_id":"doc-1",'
    b'"batch":{"id":"doc-1","size":1,"position":0},'
    b'"input":{"topic":"factstream.documents","partition":0,"offset":7},'
    b'"decided_by":{"model":"smollm2","prompt_version":"rewrite_fact.v1"},'
    b'"created_at":"2023-09-01T00:00:05Z"}'
)
V1_QUESTION = b'{"schema_version":1,"id":"q1","namespace":"desk","question":"Who is mayor?"}'
V1_ANSWER = (
    b'{"schema_version":1,"question_id":"q1","namespace":"desk","answer":"Carol",'
    b'"facts":[{"fact_id":"f1","text":"Carol is mayor.","truth":true,"history":'
    b'[{"ts":"2023-09-01T00:00:00Z","truth":true,"document_id":"d","edit_id":"e"}],'
    b'"score":0.8}],"model":"m","timings":{"answer":0.5}}'
)
# Version 2 (valid time): the interval used and the question's words it was read from.
V2_ANSWER = (
    b'{"schema_version":2,"question_id":"q1","namespace":"desk","answer":"Carol",'
    b'"facts":[],"model":"m","timings":{},'
    b'"valid_time":{"start":"2019-01-01T00:00:00Z","end":"2020-01-01T00:00:00Z"},'
    b'"time_expression":"in 2019"}'
)


def _edit(**overrides: Any) -> dict[str, Any]:
    base = orjson.loads(V1_EDIT)
    base.pop("schema_version")
    return {**base, "op": "add", "previous_text": None, "replaces": None, **overrides}


def test_version_1_records_still_read_and_keep_their_version() -> None:
    edit = FactEdit.from_bytes(V1_EDIT)
    assert edit.schema_version == 1 and edit.op is EditOp.REWRITE
    assert edit.change is None and edit.valid_from is None and edit.valid_to is None
    assert FactEdit.from_bytes(edit.to_bytes()) == edit
    assert orjson.loads(edit.to_bytes()) == orjson.loads(V1_EDIT)
    assert Question.from_bytes(V1_QUESTION).schema_version == 1
    answer = Answer.from_bytes(V1_ANSWER)
    assert answer.schema_version == 1 and answer.facts[0].valid_from is None


def test_the_shipped_schemas_accept_version_1_bytes() -> None:
    olds = ((FactEdit, V1_EDIT), (Question, V1_QUESTION), (Answer, V1_ANSWER), (Answer, V2_ANSWER))
    for model, raw in olds:
        jsonschema.validate(orjson.loads(raw), json_schema(model))


def test_changed_records_write_the_latest_version_and_read_every_one() -> None:
    assert accepted_versions(FactEdit) == (1, 2, 3, 4)
    assert accepted_versions(Question) == (1, 2, 3)
    assert accepted_versions(Answer) == (1, 2, 3, 4, 5)
    assert accepted_versions(Document) == (1, 2, 3)
    assert accepted_versions(Fact) == (1, 2, 3)
    assert FactEdit.model_validate(_edit()).schema_version == 4
    with pytest.raises(ValidationError, match="schema_version"):
        FactEdit.model_validate(_edit(schema_version=5))


def test_a_version_2_edit_with_valid_time_round_trips() -> None:
    edit = FactEdit.model_validate(
        _edit(
            op="rewrite",
            previous_text="old",
            replaces="f0",
            change="update",
            valid_from=T0.isoformat(),
            valid_to=T1.isoformat(),
        )
    )
    assert edit.change is ChangeKind.UPDATE and (edit.valid_from, edit.valid_to) == (T0, T1)
    assert FactEdit.from_bytes(edit.to_bytes()) == edit


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"schema_version": 1, "valid_from": "2023-01-01T00:00:00Z"}, "schema version 2"),
        ({"schema_version": 1, "op": "close", "valid_to": "2024-01-01T00:00:00Z"}, "version 2"),
        ({"valid_from": "2024-01-01T00:00:00Z", "valid_to": "2024-01-01T00:00:00Z"}, "before"),
        ({"valid_from": "2025-01-01T00:00:00Z", "valid_to": "2024-01-01T00:00:00Z"}, "before"),
        ({"op": "close"}, "a close sets valid_to"),
        (
            {
                "op": "close",
                "valid_from": "2020-01-01T00:00:00Z",
                "valid_to": "2024-01-01T00:00:00Z",
            },
            "only that",
        ),
        ({"op": "close", "truth": False, "valid_to": "2024-01-01T00:00:00Z"}, "leaves the fact"),
        ({"op": "close", "change": "correction", "valid_to": "2024-01-01T00:00:00Z"}, "cannot"),
        ({"change": "update"}, "op add cannot be a update"),
        ({"op": "invalidate", "truth": False, "change": "update"}, "cannot"),
        ({"op": "reinforce", "valid_to": "2024-01-01T00:00:00Z"}, "sets no valid time"),
    ],
)
def test_valid_time_shapes_are_checked(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        FactEdit.model_validate(_edit(**overrides))


def test_a_close_and_a_corrected_invalidation_are_well_formed() -> None:
    close = FactEdit.model_validate(_edit(op="close", valid_to=T1.isoformat(), change="update"))
    assert close.truth and close.valid_to == T1
    fix = FactEdit.model_validate(_edit(op="invalidate", truth=False, change="correction"))
    assert fix.change is ChangeKind.CORRECTION


def test_a_fact_interval_must_not_end_before_it_starts() -> None:
    raw = {
        "fact_id": "f",
        "namespace": "desk",
        "text": "t",
        "truth": True,
        "history": [{"ts": T0.isoformat(), "truth": True, "document_id": "d", "edit_id": "e"}],
        "first_seen": T0.isoformat(),
        "last_changed": T0.isoformat(),
    }
    assert Fact.model_validate({**raw, "valid_from": T0, "valid_to": T1}).valid_to == T1
    with pytest.raises(ValidationError, match="not before"):
        Fact.model_validate({**raw, "valid_from": T1, "valid_to": T0})
    assert Fact.model_validate({**raw, "valid_to": T1, "closed_at": T1}).closed_at == T1
    with pytest.raises(ValidationError, match="closed_at"):
        Fact.model_validate({**raw, "closed_at": T1})
    with pytest.raises(ValidationError, match="closed_at"):
        Fact.model_validate({**raw, "schema_version": 1, "valid_to": T1, "closed_at": T1})
    v1 = Fact.from_bytes(orjson.dumps({**raw, "schema_version": 1}))
    assert v1.schema_version == 1 and v1.closed_at is None


def test_questions_take_one_valid_time() -> None:
    base = orjson.loads(V1_QUESTION) | {"schema_version": 2}
    q = Question.model_validate({**base, "valid_between": {"start": T0.isoformat()}})
    assert q.valid_between == ValidWindow(start=T0)
    with pytest.raises(ValidationError, match="not both"):
        Question.model_validate({**base, "valid_at": T0, "valid_between": {"end": T1}})
    with pytest.raises(ValidationError, match="schema version 2"):
        Question.model_validate({**base, "schema_version": 1, "valid_at": T0})
    with pytest.raises(ValidationError, match="not before"):
        ValidWindow(start=T1, end=T0)


def test_answers_of_every_version_read_and_version_3_says_where_its_time_came_from() -> None:
    v2 = Answer.from_bytes(V2_ANSWER)
    assert v2.schema_version == 2 and v2.time_expression == "in 2019"
    assert v2.valid_time_source is None and v2.time_plan is None
    assert orjson.loads(v2.to_bytes()) == orjson.loads(V2_ANSWER)
    plan = TimePlanNote(outcome="anchored", scope="during", event="Smith was mayor")
    v3 = Answer(question_id="q", namespace="desk", valid_time_source="plan", time_plan=plan)
    assert v3.schema_version == 5 and v3.valid_time_source is ValidTimeSource.PLAN
    assert Answer.from_bytes(v3.to_bytes()) == v3
    jsonschema.validate(orjson.loads(v3.to_bytes()), json_schema(Answer))
    base = orjson.loads(V2_ANSWER)
    with pytest.raises(ValidationError, match="schema version 3"):
        Answer.model_validate({**base, "valid_time_source": "question"})
    with pytest.raises(ValidationError, match="schema version 2"):
        Answer.model_validate({**base, "schema_version": 1})


def test_answers_of_version_4_carry_mode_hops_rounds_and_confidence() -> None:
    hop = AnswerHop(
        question="What is the employer of Ana?",
        entity="Ana",
        relation="employer",
        facts=[],
        answer="Vela",
        seconds=0.01,
        pruned=2,
    )
    v4 = Answer(
        question_id="q", namespace="desk", mode="multi_hop", hops=[hop], rounds=2, confidence=0.0
    )
    assert Answer.from_bytes(v4.to_bytes()) == v4
    jsonschema.validate(orjson.loads(v4.to_bytes()), json_schema(Answer))
    base = orjson.loads(V2_ANSWER)
    for field, value in (("mode", "single"), ("rounds", 1), ("confidence", 1.0)):
        with pytest.raises(ValidationError, match="schema version 4"):
            Answer.model_validate({**base, "schema_version": 3, field: value})
    question = orjson.loads(V1_QUESTION)
    assert Question.model_validate({**question, "schema_version": 3, "mode": "auto"}).mode == "auto"
    with pytest.raises(ValidationError, match="schema version 3"):
        Question.model_validate({**question, "schema_version": 2, "mode": "auto"})
