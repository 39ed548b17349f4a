"""Conversation facts name people, and say who said them."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest
from fixtures.decisions import Decisions
from fixtures.editing import NS, Harness
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from factstream.edit.persons import PRONOUNS, Citation, cite_turns, said_by, unresolved_person
from factstream.lm.tasks.runner import TaskRunner
from factstream.metrics import LMMetrics
from factstream.topics.records import Document, EditOp, Turn

TURNS = [
    Turn(speaker="Ben Okafor", text="Ana! How have you been?"),
    Turn(speaker="Ana Silva", text="I moved to Lisbon last month."),
    Turn(speaker="Ben Okafor", text="Did you hear? Carl Novak joined Bluefin Logistics."),
]


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("I live in Lisbon.", "I"),
        ("My manager is Ben Okafor.", "My"),
        ("Ana Silva married you.", "you"),
        ("We moved to Porto.", "We"),
        ("Ben Okafor reports to us.", "us"),
    ],
)
def test_first_and_second_person_are_refused(text: str, word: str) -> None:
    refusal = unresolved_person(text)
    assert refusal is not None and (refusal.reason, refusal.detail) == ("unresolved_person", word)


@pytest.mark.parametrize(
    "text",
    ["Ana Silva lives in Lisbon.", "Ben Okafor moved to the US.", "Iris Young is a lawyer."],
)
def test_facts_that_name_people_pass(text: str) -> None:
    assert unresolved_person(text) is None


def test_a_fact_is_said_by_the_speaker_of_its_turn() -> None:
    assert said_by("Ana Silva lives in Lisbon.", TURNS) == "Ana Silva"
    assert said_by("Carl Novak works at Bluefin Logistics.", TURNS) == "Ben Okafor"
    assert said_by("Nothing here matches.", TURNS) is None


# A chunk with the producer's turn ids (LoCoMo's dia_id style).
TALK = [
    Turn(speaker="Ben Okafor", text="Hi Ana! Long time.", id="D1:1"),
    Turn(speaker="Ana Silva", text="I moved to Lisbon in 2021.", id="D1:2"),
    Turn(speaker="Ben Okafor", text="Nice! Where do you work now?", id="D1:3"),
    Turn(speaker="Ana Silva", text="At Bluefin Logistics, with 40 people.", id="D1:4"),
    Turn(speaker="Ben Okafor", text="Great to hear.", id="D1:5"),
]


@pytest.mark.parametrize(
    ("fact", "positions", "speaker"),
    [
        # One turn says it all.
        ("Ana Silva moved to Lisbon in 2021.", (1,), "Ana Silva"),
        # Its names and numbers are in two turns: both are cited.
        ("Ana Silva works at Bluefin Logistics in Lisbon.", (1, 3), "Ana Silva"),
        ("Bluefin Logistics has 40 people since 2021.", (1, 3), "Ana Silva"),
        # The speakers' names count for nothing: the greeting naming Ana is not cited.
        ("Ana Silva and Ben Okafor talked.", (), None),
        # Words no turn writes cite no turn, whatever the LM wrote.
        ("Carl Novak is the mayor of Porto.", (), None),
    ],
)
def test_a_fact_cites_the_turns_that_write_its_words_names_and_numbers(
    fact: str, positions: tuple[int, ...], speaker: str | None
) -> None:
    assert cite_turns(fact, TALK) == Citation(positions, speaker)


def _chunk() -> Document:
    return Document(
        id="c1-1",
        namespace=NS,
        kind="conversation",
        timestamp=datetime(2023, 1, 5, tzinfo=UTC),
        turns=TURNS,
    )  # type: ignore[call-arg]


async def test_a_chunk_is_extracted_with_the_conversation_prompt_and_attributed() -> None:
    decisions = Decisions(
        extract={
            "Lisbon": [
                "Ana Silva lives in Lisbon.",
                "I live in Lisbon.",
                "Carl Novak joined Bluefin Logistics.",
            ]
        }
    )
    h = Harness(decisions)
    registry = CollectorRegistry()
    h.ctx = dataclasses.replace(h.ctx, runner=TaskRunner(h.lm, metrics=LMMetrics.create(registry)))
    edits = await h.feed(_chunk())
    assert [(e.op, e.text, e.said_by, e.turn_ids) for e in edits] == [
        (EditOp.ADD, "Ana Silva lives in Lisbon.", "Ana Silva", ["2"]),
        (EditOp.ADD, "Carl Novak joined Bluefin Logistics.", "Ben Okafor", ["3"]),
    ]
    assert {e.decided_by.prompt_version for e in edits} == {"extract_facts.v3"}
    assert all(e.schema_version == 4 for e in edits)
    labels = {"task": "extract_facts", "model": "scripted", "reason": "unresolved_person"}
    assert registry.get_sample_value("factstream_lm_refused_total", labels) == 1
    # The LM saw the turns as "Speaker: text" lines, and the speakers.
    [request] = [r for r in h.lm.requests if r.prompt == "extract_facts.v3"]
    user = request.messages[-1].content
    assert "Ana Silva: I moved to Lisbon last month." in user
    assert "The speakers: Ben Okafor, Ana Silva." in user


async def test_facts_cite_the_producers_turn_ids_and_a_rewrite_cites_its_own() -> None:
    decisions = Decisions(
        extract={
            "40 people": ["Ana Silva works at Bluefin Logistics in Lisbon."],
            "Porto": ["Ana Silva lives in Porto."],
        },
        outdated={"Ana Silva works at Bluefin Logistics": "Ana Silva works at Tern Shipping."},
    )
    h = Harness(decisions)
    chunk = Document(
        id="c1-1",
        namespace=NS,
        kind="conversation",
        timestamp=datetime(2023, 1, 5, tzinfo=UTC),
        turns=TALK,
    )  # type: ignore[call-arg]
    [add] = await h.feed(chunk)
    assert (add.turn_ids, add.said_by) == (["D1:2", "D1:4"], "Ana Silva")
    later = [
        Turn(speaker="Ana Silva", text="Big news: I left Bluefin.", id="D2:1"),
        Turn(speaker="Ben Okafor", text="Where to?", id="D2:2"),
        Turn(speaker="Ana Silva", text="Tern Shipping, in Porto.", id="D2:3"),
    ]
    edits = await h.feed(
        Document(
            id="c2-1",
            namespace=NS,
            kind="conversation",
            timestamp=datetime(2023, 2, 5, tzinfo=UTC),
            turns=later,
        )  # type: ignore[call-arg]
    )
    cited = {(e.op, e.text): e.turn_ids for e in edits}
    assert cited == {
        (EditOp.REWRITE, "Ana Silva works at Tern Shipping."): ["D2:3"],
        (EditOp.ADD, "Ana Silva lives in Porto."): ["D2:3"],
    }
    stored = await h.store.get(NS, [e.fact_id for e in edits])
    assert {f.text: f.turn_ids for f in stored.values()} == {
        "Ana Silva works at Tern Shipping.": ["D2:3"],
        "Ana Silva lives in Porto.": ["D2:3"],
    }


async def test_an_article_keeps_the_article_prompt_and_no_speaker() -> None:
    decisions = Decisions(extract={"Lisbon": ["I live in Lisbon."]})
    h = Harness(decisions)
    article = Document(
        id="a1",
        namespace=NS,
        kind="article",
        text="A columnist writes: I live in Lisbon.",
        timestamp=datetime(2023, 1, 5, tzinfo=UTC),
    )
    [edit] = await h.feed(article)
    assert edit.said_by is None and edit.decided_by.prompt_version == "extract_facts.v2"
    assert edit.turn_ids is None


@given(
    st.lists(st.sampled_from(["Ana", "Silva", "lives", "in", "Lisbon", "works", "at", "US"])),
    st.sampled_from(sorted(PRONOUNS - {"i"}) + ["I"]),
    st.integers(0, 8),
)
def test_a_pronoun_anywhere_is_found(words: list[str], pronoun: str, at: int) -> None:
    assert unresolved_person(" ".join(words) + ".") is None
    words.insert(min(at, len(words)), pronoun)
    refusal = unresolved_person(" ".join(words) + ".")
    assert refusal is not None and refusal.detail == pronoun
