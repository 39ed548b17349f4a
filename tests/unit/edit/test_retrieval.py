"""The editor's candidates over the in-memory store: names lift facts, the floor, top_k."""

from __future__ import annotations

from datetime import UTC, datetime

from factstream.config import EditorSettings
from factstream.edit.retrieval import (
    Retrieval,
    Where,
    could_change,
    editor_candidates,
    query_vectors,
    ranked_candidates,
)
from factstream.edit.statements import named_in, restated, speakers, statements
from factstream.embed.fake import HashingEmbedder
from factstream.store.base import StoredFact
from factstream.store.memory import InMemoryFactStore
from factstream.text.names import mentions
from factstream.topics.records import Fact, HistoryEntry

NS = "retrieval"
EVERY = Where(NS, None)
T0 = datetime(2020, 1, 1, tzinfo=UTC)


def _fact(
    n: int,
    text: str,
    subject: str | None = None,
    relation: str | None = None,
    obj: str | None = None,
) -> Fact:
    ts = T0.replace(day=1 + n)
    history = [HistoryEntry(ts=ts, truth=True, document_id=f"d{n}", edit_id=f"e{n}")]
    seen = {"first_seen": ts, "last_changed": ts}
    fact = Fact(fact_id=f"f{n}", namespace=NS, text=text, truth=True, history=history, **seen)
    return fact.model_copy(update={"subject": subject, "relation": relation, "object": obj})


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


HULL = "His form to start his time at Hull City is winning over fans and critics alike."
CLUBS = [
    _fact(1, "Ian Poole member of sports team Hull City.", "Ian Poole"),
    _fact(2, "Cyrus Christie member of sports team Swansea City.", "Cyrus Christie"),
    _fact(3, "Hull City headquarters location Hull.", "Hull City"),
]


async def test_the_title_is_a_query_and_its_names_lift() -> None:
    store, embedder = await _store(CLUBS)
    with_title = Retrieval.from_settings(EditorSettings(top_k=2, min_similarity=0.99))
    assert with_title.title  # on by default
    how = with_title.but("no title", title=False)
    # The text names no subject but the club's: Christie's fact is below the floor.
    hits = await editor_candidates(store, embedder, EVERY, HULL, how)
    assert [h.fact.fact_id for h in hits] == ["f3"]
    title = "Connolly Christie Hull"
    off = await editor_candidates(store, embedder, EVERY, HULL, how, title=title)
    assert [h.fact.fact_id for h in off] == ["f3"]
    hits = await editor_candidates(store, embedder, EVERY, HULL, with_title, title=title)
    assert sorted(h.fact.fact_id for h in hits) == ["f2", "f3"]


async def test_the_object_by_its_full_name_and_the_relation_spelt_out_lift() -> None:
    facts = [
        _fact(1, "Tuvalu head of state Elizabeth II.", "Tuvalu", "head of state", "Elizabeth II"),
        _fact(2, "The King and the Queen opened the fair.", "Fair"),
    ]
    store, embedder = await _store(facts)
    how = Retrieval.from_settings(EditorSettings(top_k=1, min_similarity=-1.0)).but(
        "no cues", relation_lift=0.0, object_lift=0.0
    )
    text = "After the Queen died, the King opened the fair; he is head of state of 15 realms."
    [plain] = await editor_candidates(store, embedder, EVERY, text, how)
    assert plain.fact.fact_id == "f2"
    [cued] = await editor_candidates(store, embedder, EVERY, text, how.but("r", relation_lift=1.0))
    assert cued.fact.fact_id == "f1"
    # "Queen" is not "Elizabeth II": no object lift; "Queen Elizabeth II" is.
    obj = how.but("o", object_lift=1.0)
    [hit] = await editor_candidates(store, embedder, EVERY, text, obj)
    assert hit.fact.fact_id == "f2"
    named = text.replace("the Queen died", "Queen Elizabeth II died")
    [hit] = await editor_candidates(store, embedder, EVERY, named, obj)
    assert hit.fact.fact_id == "f1"


async def test_an_adaptive_floor_keeps_what_is_close_to_the_best_and_every_named_fact() -> None:
    facts = [
        _fact(1, "The council of the association met on Monday.", "Council"),
        _fact(2, "Mark Emmert chairs the NCAA.", "Mark Emmert"),
        _fact(3, "Oslo is a city of Norway.", "Oslo"),
        _fact(4, "The association met the council.", "Association"),
    ]
    store, embedder = await _store(facts)
    fixed = Retrieval.from_settings(EditorSettings(top_k=10, min_similarity=-1.0))
    every = {h.fact.fact_id for h in await editor_candidates(store, embedder, EVERY, DOC, fixed)}
    assert every == {"f1", "f2", "f3", "f4"}
    ranked = await ranked_candidates(store, embedder, EVERY, DOC, fixed, depth=10)
    best = max(c.hit.similarity for c in ranked)
    oslo = next(c.hit.similarity for c in ranked if c.hit.fact.fact_id == "f3")
    margin = (best - oslo) / 2  # Oslo is far below the best; the council facts are not
    adaptive = fixed.but("adaptive", floor_margin=margin)
    kept = {h.fact.fact_id for h in await editor_candidates(store, embedder, EVERY, DOC, adaptive)}
    assert "f3" not in kept and "f2" in kept  # Emmert is named: he passes whatever his cosine
    assert kept == {c.hit.fact.fact_id for c in ranked if c.hit.similarity >= best - margin} | {
        "f2"
    }


async def test_an_older_fact_of_the_same_subject_and_relation_drops() -> None:
    facts = [
        _fact(
            1, "Wendy Morton position held Minister for Europe.", "Wendy Morton", "position held"
        ),
        _fact(
            2, "Wendy Morton position held Minister for Transport.", "Wendy Morton", "position held"
        ),
        _fact(3, "Wendy Morton residence Aldridge.", "Wendy Morton", "residence"),
    ]
    store, embedder = await _store(facts)
    text = "Wendy Morton is now Chief Whip; she was Minister for Europe before."
    how = Retrieval.from_settings(EditorSettings(top_k=3, min_similarity=-1.0))
    kept = await ranked_candidates(store, embedder, EVERY, text, how.but("off", older_drop=0.0))
    assert kept[0].hit.fact.fact_id == "f1"  # the most alike: the document names its post
    dropped = await ranked_candidates(store, embedder, EVERY, text, how.but("on", older_drop=1.0))
    # f1 has a newer fact of its subject and relation (f2); the residence is no rival.
    assert [c.hit.fact.fact_id for c in dropped][-1] == "f1"
    assert [c.hit.fact.fact_id for c in dropped][:2] in (["f2", "f3"], ["f3", "f2"])


async def test_a_subjects_facts_past_the_cap_rank_after_the_others() -> None:
    facts = [
        _fact(n, f"King Charles is monarch of realm {n}.", "King Charles") for n in range(1, 5)
    ]
    facts.append(_fact(9, "Tuvalu head of state Elizabeth II.", "Tuvalu"))
    store, embedder = await _store(facts)
    text = "King Charles is monarch of 15 realms; he is head of state of Tuvalu."
    how = Retrieval.from_settings(EditorSettings(top_k=3, min_similarity=-1.0))
    uncapped = await editor_candidates(store, embedder, EVERY, text, how.but("no", subject_cap=0))
    assert all(h.fact.subject == "King Charles" for h in uncapped)
    capped = await editor_candidates(store, embedder, EVERY, text, how.but("cap", subject_cap=2))
    assert [h.fact.subject for h in capped] == ["King Charles", "King Charles", "Tuvalu"]


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
            seen = await editor_candidates(store, embedder, EVERY, DOC, how, vectors=[vector])
            new = StoredFact(_fact(n, text), await embedder.embed(text))
            await store.upsert(NS, [new])
            now = await editor_candidates(store, embedder, EVERY, DOC, how, vectors=[vector])
            verdict = could_change(seen, DOC, [vector], [new], how)
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
    seen = await editor_candidates(store, embedder, EVERY, DOC, how, vectors=[vector])
    far = StoredFact(seen[0].fact, [0.0] * len(vector))  # even with a vector far from DOC
    assert could_change(seen, DOC, [vector], [far], how)
    assert not could_change(seen, DOC, [vector], [], how)
    assert could_change(seen, DOC, [vector], [far], how.but("hybrid", rank="hybrid"))


async def test_a_newer_fact_of_a_candidates_subject_and_relation_could_change_them() -> None:
    europe = _fact(1, "Wendy Morton position held Minister for Europe.", "Wendy Morton")
    europe = europe.model_copy(update={"relation": "position held"})
    store, embedder = await _store([europe, *FACTS[1:]])
    how = Retrieval.from_settings(EditorSettings(top_k=1, min_similarity=-1.0))
    text = "Wendy Morton, Minister for Europe, spoke."
    vector = await embedder.embed(text)
    seen = await editor_candidates(store, embedder, EVERY, text, how, vectors=[vector])
    assert [h.fact.fact_id for h in seen] == ["f1"]
    whip = _fact(9, "Bananas are yellow.", "Wendy Morton", "position held", "Chief Whip")
    far = StoredFact(whip, [0.0] * len(vector))  # far from the text, yet it drops f1
    assert could_change(seen, text, [vector], [far], how)
    assert not could_change(seen, text, [vector], [far], how.but("no drop", older_drop=0.0))


CHAT = (
    "Ben Okafor: Hi Dmitri! Is Acme a good employer?\n"
    "Dmitri Kowalski: Hi Ben! Quite a lot, actually.\n"
    "Dmitri Kowalski: My residence is Lisbon now.\n"
    "Ben Okafor: Really? Tell me more."
)
PEOPLE = [
    _fact(1, "Dmitri Kowalski employer Acme.", "Dmitri Kowalski", "employer", "Acme"),
    _fact(2, "Dmitri Kowalski residence Lyon.", "Dmitri Kowalski", "residence", "Lyon"),
    _fact(3, "Ben Okafor residence Oslo.", "Ben Okafor", "residence", "Oslo"),
    _fact(4, "Dmitri Kowalski job title nurse.", "Dmitri Kowalski", "job title", "nurse"),
]


async def test_a_sentence_naming_the_subject_lifts_the_fact_whose_predicate_it_matches() -> None:
    store, embedder = await _store(PEOPLE)
    how = Retrieval.from_settings(EditorSettings(top_k=4, min_similarity=-1.0)).but(
        "plain", older_drop=0.0, statement_lift=0.0
    )
    plain = await editor_candidates(store, embedder, EVERY, CHAT, how)
    assert plain[0].fact.fact_id == "f1"  # Ben's words about Acme weigh most
    lifted = await editor_candidates(store, embedder, EVERY, CHAT, how.but("s", statement_lift=1.0))
    # Dmitri's line matches his residence; Ben's line does not name Dmitri (a first name),
    # and no line of Ben's speaks of a residence.
    assert lifted[0].fact.fact_id == "f2"
    assert [h.fact.fact_id for h in lifted].index("f3") > 0


async def test_statements_are_a_conversations_sentences_with_their_speaker() -> None:
    said = statements([CHAT], 10)
    assert [s.said for s in said] == [
        "Is Acme a good employer?",
        "Quite a lot, actually.",
        "My residence is Lisbon now.",
        "Tell me more.",
    ]
    assert said[2].naming == "Dmitri Kowalski\nMy residence is Lisbon now."
    # Only conversation lines: an article's sentences make no statements.
    assert statements(["Not a name: but a clause that is long enough.", HULL], 5) == []
    assert len(statements([CHAT], 2)) == 2
    assert statements(["Ben Okafor: Hi Dmitri!", "Ben Okafor: Wow."], 5) == []


async def test_could_change_stays_sound_with_the_statement_lift() -> None:
    # Whenever could_change says no, retrieving again finds the same candidates.
    verdicts = []
    extra = [
        _fact(10, "Dmitri Kowalski residence Porto.", "Dmitri Kowalski", "residence", "Porto"),
        _fact(11, "Ben Okafor employer Initech.", "Ben Okafor", "employer", "Initech"),
        _fact(12, "Bananas are yellow.", "Dmitri Kowalski", "colour", "yellow"),
        _fact(13, "Oslo has a harbour.", "Oslo"),
    ]
    for top_k, floor, lift in [(1, -1.0, 1.0), (2, 0.2, 0.5), (3, 0.3, 2.0)]:
        base = Retrieval.from_settings(EditorSettings(top_k=top_k, min_similarity=floor))
        how = base.but("said", statement_lift=lift, older_drop=0.0)
        for new_fact in extra:
            store, embedder = await _store(PEOPLE)
            vector = await embedder.embed(CHAT)
            seen = await editor_candidates(store, embedder, EVERY, CHAT, how, vectors=[vector])
            new = StoredFact(new_fact, await embedder.embed(new_fact.text))
            await store.upsert(NS, [new])
            now = await editor_candidates(store, embedder, EVERY, CHAT, how, vectors=[vector])
            verdict = could_change(seen, CHAT, [vector], [new], how)
            verdicts.append(verdict)
            if now != seen:
                assert verdict, (top_k, floor, lift, new_fact.text)
    assert True in verdicts and False in verdicts  # both ways were tried


def test_another_speakers_full_name_names_no_one_else_by_surname() -> None:
    text = "Ines Kowalski: I'm working for Granite Capital.\nSamir Sato: Good for you."
    assert mentions(text, "Ben Kowalski")  # the surname alone would name him
    assert not named_in(text, "Ben Kowalski")
    assert named_in(text, "Ines Kowalski") and named_in(text, "Samir Sato")
    assert named_in("Samir Sato: Did you see Kowalski today?", "Ben Kowalski")
    assert speakers(text) == {"Ines Kowalski", "Samir Sato"}


def test_a_speaker_is_who_a_sentence_is_about_only_in_the_first_person() -> None:
    said = statements(["Kavya Kowalski: Zoe Brennan moved to Rotterdam. My home is Bergen."], 5)
    assert [s.naming for s in said] == [
        "\nZoe Brennan moved to Rotterdam.",
        "Kavya Kowalski\nMy home is Bergen.",
    ]


def test_a_surname_before_another_name_word_is_a_given_name_there() -> None:
    text = "Andrew Stephenson was made Minister of State for Health."
    assert named_in(text, "Stuart Andrew")  # by surname, when that is off
    assert not named_in(text, "Stuart Andrew", given=True)
    assert named_in(text, "Andrew Stephenson", given=True)
    assert named_in("Mr Andrew spoke, then Andrew left.", "Stuart Andrew", given=True)
    # A line's end is no name word: the speaker's own surname still names them.
    assert named_in("Kavya Kowalski\nMy home is Bergen.", "Kavya Kowalski", given=True)


async def test_could_change_weighs_each_query_of_the_document() -> None:
    # The title is a query of its own: a new fact alike to it, not to the text, enters the
    # candidates by the title's cosine. could_change must weigh every query's cosine.
    title = "Connolly Christie Hull"
    entering = _fact(9, "Connolly Christie joins Hull on loan.")  # names no one it knows
    base = Retrieval.from_settings(EditorSettings(top_k=2, min_similarity=0.4))
    how = base.but("cosines only", subject_lift=0.0, object_lift=0.0, relation_lift=0.0)
    store, embedder = await _store(CLUBS)
    vectors = await query_vectors(embedder, HULL, how, title=title)
    assert len(vectors) == 2  # the text's, the title's
    seen = await editor_candidates(store, embedder, EVERY, HULL, how, vectors=vectors, title=title)
    new = StoredFact(entering, await embedder.embed(entering.text))
    doc_only = _cosine(vectors[0], new.vector)
    assert doc_only < how.min_similarity <= _cosine(vectors[1], new.vector)
    await store.upsert(NS, [new])
    now = await editor_candidates(store, embedder, EVERY, HULL, how, vectors=vectors, title=title)
    assert "f9" in [h.fact.fact_id for h in now] and now != seen
    assert could_change(seen, HULL, vectors, [new], how, title)
    # Without the title's vector it cannot tell, so it says it may.
    assert could_change(seen, HULL, vectors[:1], [new], how, title)


async def test_could_change_stays_sound_with_title_and_sentence_queries() -> None:
    # Whenever could_change says no, retrieving again finds the same candidates.
    title = "Connolly Christie Hull"
    text = HULL + " Christie was sold by Swansea City in the summer transfer window."
    extra = [
        _fact(9, "Connolly Christie joins Hull on loan."),
        _fact(10, "Swansea City sold a defender in the summer window.", "Swansea City"),
        _fact(11, "Bananas are yellow.", "Bananas"),
        _fact(12, "Oslo has a harbour.", "Oslo"),
    ]
    verdicts = []
    for top_k, floor, sentences in [(1, 0.3, 0), (2, 0.4, 2), (3, 0.2, 4)]:
        base = Retrieval.from_settings(EditorSettings(top_k=top_k, min_similarity=floor))
        how = base.but("queries", sentences=sentences, older_drop=0.0)
        for new_fact in extra:
            store, embedder = await _store(CLUBS)
            vectors = await query_vectors(embedder, text, how, title=title)
            seen = await editor_candidates(
                store, embedder, EVERY, text, how, vectors=vectors, title=title
            )
            new = StoredFact(new_fact, await embedder.embed(new_fact.text))
            await store.upsert(NS, [new])
            now = await editor_candidates(
                store, embedder, EVERY, text, how, vectors=vectors, title=title
            )
            verdict = could_change(seen, text, vectors, [new], how, title)
            verdicts.append(verdict)
            if now != seen:
                assert verdict, (top_k, floor, sentences, new_fact.text)
    assert True in verdicts and False in verdicts  # both ways were tried


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))  # unit vectors (HashingEmbedder)


SENATE = [
    _fact(
        1,
        "Nicholas Scutari position held President of New Jersey Senate.",
        "Nicholas Scutari",
        "position held",
        "President of New Jersey Senate",
    ),
    _fact(
        2,
        "Jon Bramnick position held Member of the New Jersey General Assembly.",
        "Jon Bramnick",
        "position held",
        "Member of the New Jersey General Assembly",
    ),
    _fact(3, "Oslo is a city.", "Oslo"),
]
SENATOR = "New Jersey Senate President Nicholas Scutari thanked State Sen. Jon Bramnick."


def test_a_sentence_naming_the_subject_and_every_word_of_the_object_restates_a_fact() -> None:
    def named(text: str, name: str) -> bool:
        return mentions(text, name)

    scutari, bramnick, oslo = SENATE
    assert restated(scutari, [SENATOR], named)  # the words in any order
    assert not restated(bramnick, [SENATOR], named)  # another post: what supersedes it
    assert not restated(oslo, [SENATOR], named)  # no object
    # The subject and the object in different sentences: nothing restated.
    apart = "Nicholas Scutari spoke. The New Jersey Senate President was late."
    assert not restated(scutari, [apart], named)
    assert restated(scutari, ["Nothing here.", "Scutari New Jersey Senate President"], named)


async def test_the_restated_drop_sorts_the_view_again_and_keeps_its_facts() -> None:
    store, embedder = await _store(SENATE)
    base = Retrieval.from_settings(EditorSettings(top_k=2, min_similarity=-1.0)).but(
        "base", object_lift=0.0, relation_lift=0.0, older_drop=0.0, subject_cap=0
    )
    off = await editor_candidates(store, embedder, EVERY, SENATOR, base.but("off", restated_drop=0))
    assert [h.fact.fact_id for h in off] == ["f1", "f2"]  # the restated post is most alike
    how = base.but("view", restated_drop=1.0, restated_view=True)
    view = await editor_candidates(store, embedder, EVERY, SENATOR, how)
    assert [h.fact.fact_id for h in view] == ["f2", "f1"]  # the same facts, f1 after
    assert [h.score for h in view] == [h.score for h in reversed(off)]  # scores kept
    # Over the whole ranking, the drop may push a restated fact out of the view.
    whole = await ranked_candidates(
        store, embedder, EVERY, SENATOR, how.but("whole", restated_view=False), depth=3
    )
    assert [c.hit.fact.fact_id for c in whole] == ["f2", "f3", "f1"]


def test_a_speaker_restates_only_in_the_first_person() -> None:
    def named(text: str, name: str) -> bool:
        return mentions(text, name)

    manager = _fact(
        1, "Tara Nakamura manager Dmitri Kowalski.", "Tara Nakamura", "manager", "Dmitri Kowalski"
    )
    # Dmitri speaks of Tara's new manager: he names no one as her manager.
    told = "Dmitri Kowalski: Oh, and Umar Castillo manages Tara Nakamura now."
    assert not restated(manager, [told], named)
    assert restated(manager, ["Dmitri Kowalski: Tara Nakamura reports to me."], named)
