"""The filler cue (edit/fillers.py) and full names that name no one else by surname."""

from __future__ import annotations

from datetime import UTC, datetime

from factstream.config import EditorSettings
from factstream.edit.fillers import filled
from factstream.edit.retrieval import (
    Retrieval,
    Where,
    could_change,
    editor_candidates,
    ranked_candidates,
)
from factstream.edit.statements import named_in
from factstream.embed.fake import HashingEmbedder
from factstream.store.base import StoredFact
from factstream.store.memory import InMemoryFactStore
from factstream.topics.records import Fact, HistoryEntry

NS = "fillers"
EVERY = Where(NS, None)
T0 = datetime(2020, 1, 1, tzinfo=UTC)


def _fact(n: int, subject: str, relation: str, obj: str) -> Fact:
    ts = T0.replace(day=1 + n)
    history = [HistoryEntry(ts=ts, truth=True, document_id=f"d{n}", edit_id=f"e{n}")]
    return Fact(
        fact_id=f"f{n}",
        namespace=NS,
        text=f"{subject} {relation} {obj}.",
        truth=True,
        history=history,
        first_seen=ts,
        last_changed=ts,
        subject=subject,
        relation=relation,
        object=obj,
    )


def _named(naming: str, name: str) -> bool:
    return named_in(naming, name, voices=frozenset())


JOINED = "Zoe Brennan: Hi Samir!\nSamir Sato: I've joined Kestrel Air.\nZoe Brennan: Wow."
SLOTS = [
    _fact(1, "Samir Sato", "employer", "Granite Capital"),
    _fact(2, "Zoe Brennan", "employer", "Kestrel Air"),
    _fact(3, "Samir Sato", "job title", "lawyer"),
    _fact(4, "Kestrel Air", "chief executive officer", "Zoe Brennan"),
]


def test_a_sentence_naming_the_subject_and_another_filler_of_its_relation_lifts_it() -> None:
    # "Kestrel Air" is Zoe's employer: Samir, in the first person, names a new employer.
    # Not Zoe's own fact (its object), nor Samir's job title (no job title is named), nor
    # Kestrel Air's chief executive (no other chief executive is named).
    assert filled(SLOTS, [JOINED], _named, 40) == {"f1"}
    # An article has no statements: the cue says nothing there.
    article = "Samir Sato has joined Kestrel Air, the airline said."
    assert filled(SLOTS, [article], _named, 40) == set()


def test_the_speaker_is_not_a_filler_of_what_the_sentence_says() -> None:
    text = "Olivia Nakamura: And my manager is Tara Nakamura.\nUmar Castillo: Oh."
    facts = [
        _fact(1, "Tara Nakamura", "manager", "Umar Castillo"),
        _fact(2, "Vera Petrov", "manager", "Olivia Nakamura"),
        _fact(3, "Olivia Nakamura", "manager", "Dmitri Kowalski"),
    ]
    assert filled(facts, [text], _named, 40) == set()  # Tara manages no one yet
    # Once Tara is someone's manager, Olivia's manager gets a new filler; Tara's own
    # manager does not: Olivia (another filler) is the speaker, not a word of the sentence.
    tara = _fact(4, "Dmitri Kowalski", "manager", "Tara Nakamura")
    assert filled([*facts, tara], [text], _named, 40) == {"f3"}


async def _store(facts: list[Fact]) -> tuple[InMemoryFactStore, HashingEmbedder]:
    store, embedder = InMemoryFactStore(), HashingEmbedder()
    vectors = await embedder.embed_batch([f.text for f in facts])
    await store.upsert(NS, [StoredFact(f, v) for f, v in zip(facts, vectors, strict=True)])
    return store, embedder


async def test_the_filler_lift_adds_its_weight_to_the_refilled_fact_alone() -> None:
    store, embedder = await _store(SLOTS)
    base = Retrieval.from_settings(EditorSettings(top_k=4, min_similarity=-1.0))
    off, on = base.but("off", filler_lift=0.0), base.but("on", filler_lift=1.0)
    scores = []
    for how in (off, on):
        ranked = await ranked_candidates(store, embedder, EVERY, JOINED, how)
        scores.append({c.hit.fact.fact_id: c.hit.score for c in ranked})
    assert scores[1]["f1"] - scores[0]["f1"] == 1.0
    assert all(scores[1][f] == scores[0][f] for f in ("f2", "f3", "f4"))


async def test_could_change_stays_sound_with_the_filler_lift() -> None:
    # Whenever could_change says no, retrieving again finds the same candidates; a new
    # fact whose object the chunk names may make it a filler and lift another fact.
    chat = "Ben Okafor: Hi Dmitri!\nDmitri Kowalski: I've joined Initech, you know.\nBen: Wow."
    facts = [
        _fact(1, "Dmitri Kowalski", "employer", "Acme"),
        _fact(2, "Dmitri Kowalski", "residence", "Lyon"),
        _fact(3, "Ben Okafor", "residence", "Oslo"),
        _fact(4, "Carla Diaz", "job title", "nurse"),
        _fact(5, "Erik Berg", "employer", "Initech"),
    ]
    extra = [
        _fact(10, "Ben Okafor", "employer", "Initech"),
        _fact(11, "Carla Diaz", "employer", "Globex"),
        _fact(12, "Dmitri Kowalski", "job title", "pilot"),
        _fact(13, "Dmitri Kowalski", "employer", "Hooli"),  # refilled as it enters
    ]
    verdicts = []
    for top_k, floor in [(1, -1.0), (2, 0.2), (3, 0.9)]:
        base = Retrieval.from_settings(EditorSettings(top_k=top_k, min_similarity=floor))
        how = base.but("fillers", filler_lift=1.0, statement_lift=0.0, older_drop=0.0)
        for new_fact in extra:
            store, embedder = await _store(facts)
            vector = await embedder.embed(chat)
            seen = await editor_candidates(store, embedder, EVERY, chat, how, vectors=[vector])
            new = StoredFact(new_fact, await embedder.embed(new_fact.text))
            await store.upsert(NS, [new])
            now = await editor_candidates(store, embedder, EVERY, chat, how, vectors=[vector])
            verdict = could_change(seen, chat, [vector], [new], how)
            verdicts.append(verdict)
            if now != seen:
                assert verdict, (top_k, floor, new_fact.text)
    assert True in verdicts and False in verdicts  # both ways were tried


def test_a_surname_inside_another_full_name_names_no_one_else_with_full_names() -> None:
    text = "Luca Varga: Ben Kowalski is my boss."
    assert named_in(text, "Ines Kowalski")  # the surname alone names her
    assert not named_in(text, "Ines Kowalski", full=True)
    assert named_in(text, "Ben Kowalski", full=True)
    assert named_in("Kowalski said no.", "Ines Kowalski", full=True)  # no other full name
