"""Conversation documents: sessions cut into chunks of turns, as a user would publish them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from factstream.topics.records import Document
from factstream_lab.eval.locomo.chunks import chunks, conversation_documents, turn_passage
from factstream_lab.eval.locomo.data import Session, Turn, load_locomo
from factstream_lab.eval.locomo.kb_turns import passage_text


def _session(count: int) -> Session:
    turns = tuple(
        Turn(f"D3:{i}", "Jon" if i % 2 else "Gina", f"turn {i}") for i in range(1, count + 1)
    )
    return Session(3, datetime(2023, 2, 1, 9, tzinfo=UTC), turns)


def test_a_session_is_cut_into_consecutive_chunks() -> None:
    cut = list(chunks(_session(19), 8))
    assert [len(c.turns) for c in cut] == [8, 8, 3]
    assert [(c.index, c.of) for c in cut] == [(1, 3), (2, 3), (3, 3)]
    assert [t.id for c in cut for t in c.turns] == [f"D3:{i}" for i in range(1, 20)]
    with pytest.raises(ValueError, match="at least one turn"):
        list(chunks(_session(3), 0))


def test_documents_carry_speakers_captions_the_session_time_and_turn_ids(locomo_dir: Path) -> None:
    (conversation,) = load_locomo(locomo_dir)
    documents = conversation_documents(conversation, "locomo-7", turns_per_chunk=2)
    assert [turns for _, turns in documents] == [("D1:1", "D1:2"), ("D1:3",), ("D2:1", "D2:2")]
    first, photo, last = (d for d, _ in documents)
    assert first.kind == "conversation" and first.timestamp == conversation.sessions[0].time
    assert last.timestamp == conversation.sessions[1].time
    assert first.text == "Caroline: Hey Mel!\nCaroline: I went to a support group yesterday."
    assert "[shares a photo: a photo of a painting of a sunset]" in photo.text
    assert len({d.id for d, _ in documents}) == 3
    # What a user publishes reads back as the same document.
    assert Document.model_validate_json(first.model_dump_json()) == first


def test_a_turn_passage_names_its_speaker() -> None:
    turn = Turn("D1:3", "Melanie", "Look.", "a dog")
    assert turn_passage(turn) == "Melanie: Look. [shares a photo: a dog]"


def test_a_passage_holds_the_turns_said_before_it_within_its_session() -> None:
    session = _session(4)
    assert passage_text(session, 2, 0) == "Jon: turn 3"
    assert passage_text(session, 2, 1) == "Gina: turn 2\nJon: turn 3"
    assert passage_text(session, 0, 2) == "Jon: turn 1"  # nothing before the first
    assert passage_text(session, 3, 9) == "\n".join(turn_passage(t) for t in session.turns)
