"""The collection layout: names, properties, object ids and the fact codec."""

from __future__ import annotations

from unit.store.builders import day, make_fact

from factstream.store.base import AppliedBatch
from factstream.store.schema import (
    FACT_PROPERTIES,
    PropertyType,
    batch_from_properties,
    batch_properties,
    batch_uuid,
    collections_for,
    fact_from_properties,
    fact_properties,
    fact_uuid,
)
from factstream.topics.records import Fact


def test_collection_names_take_the_prefix() -> None:
    names = collections_for("TestAbc")
    assert (names.facts.name, names.batches.name) == ("TestAbcFact", "TestAbcAppliedBatch")
    assert names.facts.vectors and not names.batches.vectors


def test_only_the_text_is_searched_and_the_record_is_not_indexed() -> None:
    props = {spec.name: spec for spec in FACT_PROPERTIES}
    assert [name for name, spec in props.items() if spec.searchable] == ["text"]
    assert not props["record"].filterable and props["record"].type is PropertyType.TEXT
    flat = set(Fact.model_fields) - {"schema_version", "namespace", "history"}
    assert flat <= set(props)


def test_object_ids_are_deterministic_per_namespace() -> None:
    assert fact_uuid("desk-a", "f1") == fact_uuid("desk-a", "f1")
    assert fact_uuid("desk-a", "f1") != fact_uuid("desk-b", "f1")
    assert fact_uuid("desk-a", "f1") != batch_uuid("desk-a", "f1")


def test_a_fact_round_trips_through_its_properties() -> None:
    fact = make_fact("f1", "text", [(0, True), (4, False)], subject="s", valid_to=day(9))
    props = fact_properties(fact)
    assert props["truth"] is False and props["subject"] == "s"
    assert (props["history_from"], props["history_to"]) == (day(0), day(4))
    assert "relation" not in props and "valid_from" not in props
    assert fact_from_properties(props) == fact


def test_an_applied_batch_round_trips() -> None:
    batch = AppliedBatch("doc-1", "batch-1", 4)
    assert batch_from_properties(batch_properties(batch)) == batch


def test_a_facts_turns_are_a_filterable_list_and_round_trip() -> None:
    props = {spec.name: spec for spec in FACT_PROPERTIES}
    assert props["turn_ids"].type is PropertyType.TEXT_ARRAY and props["turn_ids"].filterable
    fact = make_fact("f1", "Ana Silva lives in Lisbon.", turn_ids=["D1:2", "D1:4"])
    stored = fact_properties(fact)
    assert stored["turn_ids"] == ["D1:2", "D1:4"]
    assert fact_from_properties(stored) == fact
    assert "turn_ids" not in fact_properties(make_fact("f2"))
