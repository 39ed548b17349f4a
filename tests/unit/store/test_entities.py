"""The entity index: keys of names, of facts, and the store's entity filter."""

from __future__ import annotations

from unit.store.builders import make_fact, stored

from factstream.store.entities import (
    entity_key,
    fact_entities,
    fact_entity_keys,
    is_about,
    keys_of,
    name_keys,
)
from factstream.store.memory import InMemoryFactStore

_STRUCT = {"relation": "employer", "object_type": "organization"}


def test_keys_fold_case_accents_punctuation_and_the() -> None:
    assert entity_key("  The Cobalt Robotics's ") == "cobalt robotics"
    assert entity_key("José  Álvarez") == "jose alvarez"
    assert entity_key("AT&T, Inc.") == "at&t inc"
    assert entity_key("...") == ""
    assert keys_of(["Ana Silva", "ana  silva", "", "Bo"]) == ["ana silva", "bo"]


def test_name_keys_put_the_name_first_then_its_aliases() -> None:
    assert name_keys("Umar Castillo") == ("umar castillo", "castillo")
    assert name_keys("Umar Castillo", short=False) == ("umar castillo",)
    assert name_keys("National Collegiate Athletic Association")[1:] == ("ncaa",)


def test_structured_fact_is_about_its_subject_and_object() -> None:
    fact = make_fact(
        "f1",
        "Umar Castillo works for Cobalt Robotics.",
        subject="Umar Castillo",
        object="Cobalt Robotics",
        **_STRUCT,
    )
    assert fact_entities(fact).names == ("Umar Castillo", "Cobalt Robotics")
    # A two-word name's last word is an alias whoever it names ("Robotics" too): a lookup
    # asks with the full name's key first.
    keys = set(fact_entity_keys(fact))
    assert keys == {"umar castillo", "castillo", "cobalt robotics", "robotics"}
    assert is_about(fact, ["cobalt robotics"]) and not is_about(fact, ["lisbon"])


def test_a_fact_without_structure_is_about_the_names_in_its_text() -> None:
    fact = make_fact("f1", "The chief executive of Cobalt Robotics is Umar Castillo.")
    assert fact_entities(fact).subject is None or fact_entities(fact).subject == "Cobalt Robotics"
    assert {"cobalt robotics", "umar castillo"} <= set(fact_entity_keys(fact))
    lowercase = make_fact("f2", "it rained all week")
    assert fact_entity_keys(lowercase) == ()


async def test_memory_store_filters_by_entity() -> None:
    store = InMemoryFactStore()
    ana = make_fact(
        "f1", "Ana Silva works for Vela.", subject="Ana Silva", object="Vela", **_STRUCT
    )
    bo = make_fact("f2", "Bo Lind works for Vela.", subject="Bo Lind", object="Vela", **_STRUCT)
    await store.upsert("desk-a", [stored(ana), stored(bo)])

    async def ids(entities: list[str] | None) -> list[str]:
        hits = await store.search(
            "desk-a",
            "works",
            [1.0, 0.0, 0.0],
            as_of=None,
            top_k=5,
            min_similarity=-1.0,
            alpha=1.0,
            entities=entities,
        )
        return sorted(h.fact.fact_id for h in hits)

    assert await ids(["ana silva"]) == ["f1"]
    assert await ids(["vela"]) == ["f1", "f2"]
    assert await ids(["lind", "nobody"]) == ["f2"]
    assert await ids([]) == []
    assert await ids(None) == ["f1", "f2"]
