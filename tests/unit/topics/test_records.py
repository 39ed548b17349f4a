"""Wire records: validation, deterministic ids, round trips, and the shipped JSON Schemas."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import jsonschema
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from factstream.topics.definitions import TOPICS, TopicName, topic_name
from factstream.topics.records import (
    Document,
    EditOp,
    Fact,
    FactEdit,
    FeedEntryState,
    HistoryEntry,
    edit_id_for,
    fact_id_for,
)
from factstream.topics.schemas import RECORDS, SCHEMA_DIR, json_schema, render

T0 = datetime(2023, 9, 1, tzinfo=UTC)
CLARK_LINE = {
    "id": "clark-331abc833aa0",
    "namespace": "clark-news",
    "kind": "article",
    "timestamp": "2010-01-22T00:00:00Z",
    "source": "https://example.org/queen",
    "text": "The Queen will address the nation.",
}


def _edit(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "edit_id": edit_id_for("desk", "doc-1", 0),
        "namespace": "desk",
        "fact_id": fact_id_for("desk", "doc-1", 0),
        "op": "add",
        "text": "Mike Lawler is a United States representative.",
        "truth": True,
        "event_time": T0.isoformat(),
        "document_id": "doc-1",
        "batch": {"id": "doc-1", "size": 1, "position": 0},
        "input": {"topic": "factstream.documents", "partition": 0, "offset": 7},
        "decided_by": {"model": "smollm2", "prompt_version": "extract_facts.v1"},
        "created_at": T0.isoformat(),
    }
    return {**base, **overrides}


def test_a_clark_news_line_is_a_document() -> None:
    doc = Document.model_validate(CLARK_LINE)
    assert doc.timestamp == datetime(2010, 1, 22, tzinfo=UTC)
    assert Document.from_bytes(doc.to_bytes()) == doc


def test_missing_id_becomes_a_content_hash_independent_of_time_spelling() -> None:
    raw = {k: v for k, v in CLARK_LINE.items() if k != "id"}
    zulu = Document.model_validate(raw)
    offset = Document.model_validate({**raw, "timestamp": "2010-01-22T00:00:00+00:00"})
    assert zulu.id == offset.id and zulu.id.startswith("sha256-")
    assert Document.model_validate({**raw, "text": "Something else."}).id != zulu.id


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"timestamp": "2010-01-22T00:00:00"}, "timestamp"),  # no zone: event time is ambiguous
        ({"timestamp": "last tuesday"}, "timestamp"),
        ({"text": ""}, "text"),
        ({"text": " \u200b\n"}, "text"),  # nothing visible
        ({"id": ""}, "id"),  # omitted or null means a content hash; empty is an error
        ({"timestamp": 1264118400}, "timestamp"),  # an epoch: of what unit?
        ({"namespace": "../etc"}, "namespace"),
        ({"namespace": "x" * 65}, "namespace"),
        ({"kind": "tweet"}, "kind"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_bad_documents_are_rejected_naming_the_field(change: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError, match=field):
        Document.model_validate({**CLARK_LINE, **change})


def test_undecodable_bytes_are_rejected() -> None:
    with pytest.raises(orjson.JSONDecodeError):
        Document.from_bytes(b"\xff\xfe not json")


def test_edit_and_fact_ids_are_deterministic_per_position() -> None:
    assert edit_id_for("desk", "doc-1", 0) == edit_id_for("desk", "doc-1", 0)
    ids = {edit_id_for("desk", "doc-1", i) for i in range(50)}
    ids |= {edit_id_for("other", "doc-1", 0), fact_id_for("desk", "doc-1", 0)}
    assert len(ids) == 52


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"op": "rewrite"}, "names the fact it replaces"),
        ({"op": "invalidate", "truth": True}, "false after the edit"),
        ({"op": "add", "truth": False}, "leaves the fact true"),
        ({"batch": {"id": "doc-1", "size": 2, "position": 2}}, "outside a batch"),
    ],
)
def test_edit_shapes_are_checked(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        FactEdit.model_validate(_edit(**overrides))


def test_rewrite_edit_round_trips() -> None:
    edit = FactEdit.model_validate(
        _edit(op="rewrite", previous_text="old text", replaces=fact_id_for("desk", "doc-0", 3))
    )
    assert edit.op is EditOp.REWRITE
    assert FactEdit.from_bytes(edit.to_bytes()) == edit


def _entry(days: int, truth: bool) -> HistoryEntry:
    return HistoryEntry(ts=T0 + timedelta(days=days), truth=truth, document_id="d", edit_id="e")


def test_fact_truth_at_a_time_is_the_last_entry_before_it() -> None:
    fact = Fact(
        fact_id="f",
        namespace="desk",
        text="t",
        truth=False,
        history=[_entry(0, True), _entry(10, False)],
        first_seen=T0,
        last_changed=T0 + timedelta(days=10),
    )
    assert fact.truth_at(T0 - timedelta(days=1)) is None
    assert fact.truth_at(T0 + timedelta(days=5)) is True
    assert fact.truth_at(T0 + timedelta(days=10)) is False


def test_fact_history_must_be_in_event_time_order() -> None:
    with pytest.raises(ValidationError, match="event-time order"):
        Fact(
            fact_id="f",
            namespace="desk",
            text="t",
            truth=True,
            history=[_entry(10, False), _entry(0, True)],
            first_seen=T0,
            last_changed=T0,
        )


@given(
    text=st.builds(str.__add__, st.characters(categories=["L", "N"]), st.text(max_size=200)),
    seconds=st.integers(min_value=0, max_value=2_000_000_000),
    metadata=st.dictionaries(st.text(max_size=10), st.text(max_size=10), max_size=3),
)
def test_documents_round_trip_through_bytes(
    text: str, seconds: int, metadata: dict[str, str]
) -> None:
    doc = Document(
        namespace="desk",
        kind="article",
        text=text,
        metadata=metadata,  # type: ignore[arg-type]
        timestamp=datetime.fromtimestamp(seconds, tz=UTC),
    )
    assert Document.from_bytes(doc.to_bytes()) == doc


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_shipped_schema_matches_the_model(name: str) -> None:
    shipped = (SCHEMA_DIR / f"{name}.schema.json").read_text()
    assert shipped == render(RECORDS[name]), "run: python -m factstream.topics.schemas"


def test_schemas_accept_what_the_models_write_and_reject_what_they_refuse() -> None:
    jsonschema.Draft202012Validator.check_schema(json_schema(Document))
    doc_schema = json.loads((SCHEMA_DIR / "document.schema.json").read_text())
    without_id = {k: v for k, v in CLARK_LINE.items() if k != "id"}
    jsonschema.validate(without_id, doc_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**CLARK_LINE, "kind": "tweet"}, doc_schema)
    edit_schema = json.loads((SCHEMA_DIR / "fact-edit.schema.json").read_text())
    jsonschema.validate(orjson.loads(FactEdit.model_validate(_edit()).to_bytes()), edit_schema)


def test_every_topic_record_ships_a_schema_and_nothing_else_does() -> None:
    # RECORDS is derived from TOPICS; two records with one schema name would lose one here.
    assert set(RECORDS.values()) == {spec.value for spec in TOPICS.values()}
    assert RECORDS["feed-entry-state"] is FeedEntryState
    state = FeedEntryState(
        namespace="desk",
        entry_id="e1",
        feed_url="https://example.org/feed.xml",
        content_hash="0" * 64,
        version=1,
        document_id="d1",
        published_at=T0,
    )
    state_schema = json.loads((SCHEMA_DIR / "feed-entry-state.schema.json").read_text())
    jsonschema.validate(orjson.loads(state.to_bytes()), state_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**orjson.loads(state.to_bytes()), "version": 0}, state_schema)


def test_topics_are_declared_once_with_their_policies() -> None:
    assert TOPICS[TopicName.FACTS].configs() == {"cleanup.policy": "compact"}
    assert TOPICS[TopicName.FACT_EDITS].configs()["retention.ms"] == "-1"
    assert TOPICS[TopicName.DOCUMENTS].key == "namespace"
    assert TOPICS[TopicName.FACT_EDITS].key == "fact_id"
    assert topic_name(TopicName.DOCUMENTS, "staging.") == "staging.factstream.documents"
    assert set(TOPICS) == set(TopicName)


def test_shipped_schemas_are_package_data() -> None:
    assert sorted(p.stem.removesuffix(".schema") for p in SCHEMA_DIR.glob("*.json")) == sorted(
        RECORDS
    )
