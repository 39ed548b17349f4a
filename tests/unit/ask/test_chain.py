"""Chain retrieval: a hop looks facts up by entity at the asked time, ranks by relation."""

from __future__ import annotations

from typing import Any

from unit.store.builders import day, make_fact

from factstream.ask.chain import HopWhere, hop_facts, other_end, relation_match
from factstream.embed.fake import HashingEmbedder
from factstream.store.base import StoredFact
from factstream.store.memory import InMemoryFactStore
from factstream.temporal.intervals import at

NS = "desk-a"


def _fact(fact_id: str, text: str, triple: tuple[str, str, str] | None, **extra: Any) -> Any:
    structure = {}
    if triple is not None:
        subject, relation, obj = triple
        structure = {"subject": subject, "relation": relation, "object": obj}
        structure["object_type"] = "other"
    return make_fact(fact_id, text, **structure, **extra)


FACTS = [
    _fact(
        "e1",
        "Ana Silva works for Vela.",
        ("Ana Silva", "employer", "Vela"),
        valid_from=day(0),
        valid_to=day(10),
    ),
    _fact(
        "e2", "Ana Silva works for Orbit.", ("Ana Silva", "employer", "Orbit"), valid_from=day(10)
    ),
    _fact("t1", "Ana Silva is an engineer.", ("Ana Silva", "job title", "engineer")),
    _fact(
        "c1",
        "Bo Lind is the chief executive officer of Vela.",
        ("Vela", "chief executive officer", "Bo Lind"),
    ),
    _fact(
        "c2",
        "Cy Ode is the chief executive officer of Orbit.",
        ("Orbit", "chief executive officer", "Cy Ode"),
    ),
    _fact("r1", "Dana Reyes lives in Porto.", None),
]


async def _store() -> InMemoryFactStore:
    store, embedder = InMemoryFactStore(), HashingEmbedder()
    vectors = await embedder.embed_batch([f.text for f in FACTS])
    await store.upsert(NS, [StoredFact(f, v) for f, v in zip(FACTS, vectors, strict=True)])
    return store


async def _hop(store: InMemoryFactStore, entity: str, relation: str, when: float = 20) -> list[Any]:
    where = HopWhere(NS, None, at(day(when)))
    return await hop_facts(store, HashingEmbedder(), where, entity, relation, alpha=0.5)


async def test_a_hop_reads_the_fact_valid_at_the_asked_time() -> None:
    store = await _store()
    before, after = (
        await _hop(store, "Ana Silva", "employer", 5),
        await _hop(store, "Ana Silva", "employer", 15),
    )
    assert before[0].fact.fact_id == "e1" and before[0].leads_to == "Vela"
    assert after[0].fact.fact_id == "e2" and after[0].leads_to == "Orbit"
    assert {h.fact.fact_id for h in after} == {"e2", "t1"}  # only Ana's facts, held then


async def test_the_next_hop_is_anchored_on_the_previous_hops_entity() -> None:
    store = await _store()
    first = await _hop(store, "Ana Silva", "employer", 5)
    second = await _hop(store, first[0].leads_to, "chief executive", 5)
    # Vela's facts: its chief executive ranks above Ana working there.
    assert [h.fact.fact_id for h in second] == ["c1", "e1"]
    assert second[0].leads_to == "Bo Lind"


async def test_an_anchor_that_is_the_object_leads_to_the_subject() -> None:
    store = await _store()
    ranked = await _hop(store, "Bo Lind", "CEO")
    assert ranked[0].fact.fact_id == "c1" and ranked[0].leads_to == "Vela"
    assert other_end(FACTS[3], "Vela") == "Bo Lind"


async def test_an_alias_finds_a_fact_without_structure() -> None:
    store = await _store()
    ranked = await _hop(store, "Reyes", "residence")
    assert [h.fact.fact_id for h in ranked] == ["r1"] and ranked[0].leads_to == "Porto"
    assert await _hop(store, "Nobody Here", "employer") == []


def test_relation_match_counts_words_stems_and_acronyms() -> None:
    ceo = FACTS[3]
    assert relation_match("CEO", ceo) == 1.0
    assert relation_match("chief executive", ceo) == 1.0
    assert relation_match("employer", ceo) == 0.0
    assert relation_match("lives", FACTS[5]) == 1.0  # unstructured: the text's words


class _Asked(InMemoryFactStore):
    """The in-memory store, remembering each search's keyword text and entity filter."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[tuple[str, Any]] = []

    async def search(self, namespace: str, query: str, *args: Any, **kwargs: Any) -> Any:
        self.asked.append((query, kwargs.get("entities")))
        return await super().search(namespace, query, *args, **kwargs)


async def test_under_the_entity_index_the_keywords_are_the_relation_alone() -> None:
    store, embedder = _Asked(), HashingEmbedder()
    vectors = await embedder.embed_batch([f.text for f in FACTS])
    await store.upsert(NS, [StoredFact(f, v) for f, v in zip(FACTS, vectors, strict=True)])
    where = HopWhere(NS, None, at(day(5)))
    ranked = await hop_facts(store, embedder, where, "Ana Silva", "employer", alpha=0.5)
    assert ranked[0].fact.fact_id == "e1"
    assert store.asked == [("employer", ("ana silva",))]
    store.asked.clear()
    await hop_facts(store, embedder, where, "Ana Silva", "employer", alpha=0.5, by_entity=False)
    assert store.asked == [("Ana Silva employer", None)]
    store.asked.clear()
    await hop_facts(store, embedder, where, "Ana Silva", "--", alpha=0.5)  # no word in it
    assert [q for q, _ in store.asked] == ["Ana Silva --"]
