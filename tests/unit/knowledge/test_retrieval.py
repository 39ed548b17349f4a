"""The editor's candidates over the in-memory store: names lift facts, the floor, top_k."""

from __future__ import annotations

from datetime import UTC, datetime

from factstream.config import EditorSettings
from factstream.embed.fake import HashingEmbedder
from factstream.knowledge.retrieval import (
    Retrieval,
    Where,
    could_change,
    editor_candidates,
    ranked_candidates,
)
from factstream.store.base import StoredFact
from factstream.store.memory import InMemoryFactStore
from factstream.topics.records import Fact, HistoryEntry

NS = "retrieval"
EVERY = Where(NS, None)
T0 = datetime(2020, 1, 1, tzinfo=UTC)


def _fact(n: int, text: str, subject: str | None = None) -> Fact:
    ts = T0.replace(day=1 + n)
    history = [HistoryEntry(ts=ts, truth=True, document_id=f"d{n}", edit_id=f"e{n}")]
    seen = {"first_seen": ts, "last_changed": ts}
    fact = Fact(fact_id=f"f{n}", namespace=NS, text=text, truth=True, history=history, **seen)
    return fact.model_copy(update={"subject": subject})


async def _store(facts: list[Fact]) -> tuple[InMemoryFactStore, HashingEmbedder]:
    store, embedder = InMemoryFactStore(), HashingEmbedder()
    vectors = await embedder.embed_batch([f.text for f in facts])
    await store.upsert(NS, [StoredFact(f, v) for f, v in zip(facts, vectors, strict=True)])
    return store, embedder


DOC = "Emmert stepped down; the council of the association met on Monday and chose again."
FACTS = [
    _fact(1, "The council of the association met on Monday.", "Council"),
    _fact(2, "Mark Emmert chairs the NCAA.", "Mark Emmert"),
    _fact(3, "Oslo is a city.", "Oslo"),
]


async def test_a_fact_whose_subject_the_document_names_is_lifted_past_the_floor() -> None:
    store, embedder = await _store(FACTS)
    how = Retrieval.from_settings(EditorSettings(top_k=2, min_similarity=0.9))
    hits = await editor_candidates(store, embedder, EVERY, DOC, how)
    # Only the named fact clears the floor, though the council fact shares more words.
    assert [h.fact.fact_id for h in hits] == ["f2"]
    plain = how.but("before", first_stage=0)
    ranked = await ranked_candidates(store, embedder, EVERY, DOC, plain)
    assert ranked[0].hit.fact.fact_id == "f1" and not any(c.passes for c in ranked)


async def test_without_the_lift_the_similarity_decides_and_top_k_bounds() -> None:
    store, embedder = await _store(FACTS)
    how = Retrieval.from_settings(EditorSettings(top_k=1, min_similarity=-1.0)).but(
        "l", subject_lift=1.0
    )
    off = how.but("off", subject_lift=0.0, named_pass=False)
    [hit] = await editor_candidates(store, embedder, EVERY, DOC, off)
    assert hit.fact.fact_id == "f1"
    [lifted] = await editor_candidates(store, embedder, EVERY, DOC, how)
    assert lifted.fact.fact_id == "f2"


async def test_a_fact_without_structure_is_named_by_its_text() -> None:
    facts = [
        _fact(1, "The council of the association met on Monday."),
        _fact(2, "Jo Bloggs is mayor."),
    ]
    store, embedder = await _store(facts)
    how = Retrieval.from_settings(EditorSettings(top_k=5, min_similarity=0.99))
    text = "Jo Bloggs said the council of the association met on Monday."
    hits = await editor_candidates(store, embedder, EVERY, text, how)
    assert [h.fact.fact_id for h in hits] == ["f2"]


async def test_retrieval_time_is_recorded_per_stage() -> None:
    store, embedder = await _store(FACTS)
    timings: dict[str, float] = {}
    how = Retrieval.from_settings(EditorSettings()).but("sentences", sentences=4)
    await editor_candidates(store, embedder, EVERY, DOC, how, timings)
    assert set(timings) == {"embed", "retrieve"} and all(t > 0 for t in timings.values())


NEW = [
    "The council of the association chose a chair on Monday.",  # close to DOC
    "Emmert stepped down from the NCAA.",  # names DOC's subject
    "Bananas are yellow.",  # far from DOC
    "Oslo has a harbour.",
]


async def test_a_new_fact_that_could_not_change_the_candidates_does_not() -> None:
    # Whenever could_change says no, retrieving again finds the same candidates.
    verdicts = []
    for top_k, floor in [(1, -1.0), (2, 0.2), (5, 0.3)]:
        how = Retrieval.from_settings(EditorSettings(top_k=top_k, min_similarity=floor))
        for n, text in enumerate(NEW, start=10):
            store, embedder = await _store(FACTS)
            vector = await embedder.embed(DOC)
            seen = await editor_candidates(store, embedder, EVERY, DOC, how, vector=vector)
            new = StoredFact(_fact(n, text), await embedder.embed(text))
            await store.upsert(NS, [new])
            now = await editor_candidates(store, embedder, EVERY, DOC, how, vector=vector)
            verdict = could_change(seen, DOC, vector, [new], how)
            verdicts.append(verdict)
            if not verdict:
                assert [h.fact.fact_id for h in now] == [h.fact.fact_id for h in seen]
            if now != seen:
                assert verdict
    assert True in verdicts and False in verdicts  # both ways were tried


async def test_a_changed_candidate_could_change_them_and_nothing_changed_cannot() -> None:
    store, embedder = await _store(FACTS)
    how = Retrieval.from_settings(EditorSettings(top_k=1, min_similarity=-1.0))
    vector = await embedder.embed(DOC)
    seen = await editor_candidates(store, embedder, EVERY, DOC, how, vector=vector)
    far = StoredFact(seen[0].fact, [0.0] * len(vector))  # even with a vector far from DOC
    assert could_change(seen, DOC, vector, [far], how)
    assert not could_change(seen, DOC, vector, [], how)
    assert could_change(seen, DOC, vector, [far], how.but("hybrid", rank="hybrid"))
