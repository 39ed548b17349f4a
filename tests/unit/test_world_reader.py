"""The LM double's reading of generated conversations (tests/fixtures/world_reader.py): from
each chunk's text alone it finds exactly what the world says there, and its labels close or
invalidate the earlier value of a slot, never another slot's fact."""

from __future__ import annotations

import json

import pytest

from factstream_lab.world.generate import WorldConfig, generate_world
from tests.fixtures.decisions import Decisions
from tests.fixtures.world_reader import world_patterns


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 7])
def test_every_chunk_reads_as_the_statements_it_states(seed: int) -> None:
    world = generate_world(WorldConfig(seed=seed, people=6, steps=4, changes=3))
    double = Decisions(patterns=world_patterns())
    for conversation in world.conversations:
        for chunk in conversation.chunks:
            stated = {
                (st.subject, st.relation, st.object)
                for st, chunk_id in conversation.stated_in.items()
                if chunk_id == chunk.id
            }
            read = {(f["subject"], f["relation"], f["object"]) for f in double.read(chunk.text)}
            assert read == stated, chunk.text


def _extracted(double: Decisions, document: str) -> list[dict[str, object]]:
    user = f"<document>\n{document}\n</document>\n\nList at most 8 facts."
    return json.loads(double.answer("extract_facts.v2", user))["facts"]


def test_a_change_closes_the_slot_and_a_plain_statement_invalidates_it() -> None:
    double = Decisions(patterns=world_patterns())
    moved = "Vera Quist: Oh, and I moved to Porto.\nZoe Brennan: Good for you."
    [fact] = _extracted(double, moved)
    assert fact["text"] == "Vera Quist residence Porto." and fact["subject"] == "Vera Quist"
    assert double.label("Vera Quist residence Madrid.", moved, v3=True) == "outdated"
    assert double.label("Vera Quist residence Porto.", moved, v3=True) == "no_change"
    assert double.label("Vera Quist employer Cobalt Robotics.", moved, v3=True) == "no_change"
    assert double.label("Zoe Brennan residence Madrid.", moved, v3=True) == "no_change"
    stated = "Wes Okafor: My manager is Zoe Brennan."
    assert double.label("Wes Okafor manager Vera Quist.", stated, v3=True) == "wrong"
    married = "Ana Silva: Did you hear? Ben Sato married Tara Zhou."
    texts = [f["text"] for f in _extracted(double, married)]
    assert texts == ["Ben Sato spouse Tara Zhou.", "Tara Zhou spouse Ben Sato."]


def test_best_fact_reads_the_fact_about_the_question() -> None:
    double = Decisions(best_fact=True)
    user = (
        "<facts>\n- Wes Okafor employer Cobalt Robotics.\n"
        "- Vera Quist employer Cobalt Robotics. [true from 2024-01-01; false from 2024-01-31]\n"
        "- Vera Quist employer Bluefin Logistics. [true from 2024-01-31]\n</facts>\n\n"
        "<question>\nWho employs Vera Quist?\n</question>\n\n"
        "Choices:\n- Cobalt Robotics\n- Bluefin Logistics\n\nAnswer."
    )
    answer = json.loads(double.answer("answer_choice.v1", user))["answer"]
    assert answer == "Bluefin Logistics"
    assert json.loads(Decisions().answer("answer_choice.v1", user))["answer"] == "Cobalt Robotics"


def test_best_fact_prefers_the_relation_the_question_asks_for() -> None:
    """A true fact of another slot naming a choice (Wes is still Kestrel Air's chief
    executive: nothing in the stream closed it) does not win by being listed first: the
    question's verb meets the employer fact's relation (issue 39, BM25 b 0)."""
    double = Decisions(best_fact=True)
    user = (
        "<facts>\n- Kestrel Air chief executive officer Wes Okafor. [true from 2024-01-01]\n"
        "- Wes Okafor employer Cobalt Robotics. [true from 2024-01-31]\n</facts>\n\n"
        "<question>\nWho employs Wes Okafor?\n</question>\n\n"
        "Choices:\n- Cobalt Robotics\n- Kestrel Air\n\nAnswer."
    )
    assert json.loads(double.answer("answer_choice.v1", user))["answer"] == "Cobalt Robotics"
    swapped = user.replace("employs", "heads")  # no relation word in common: the first listed
    assert json.loads(double.answer("answer_choice.v1", swapped))["answer"] == "Kestrel Air"
