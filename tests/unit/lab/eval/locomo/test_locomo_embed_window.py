"""The turns knowledge base: a passage's vector from a window of turns, its text its own."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from factstream.edit.materializer import Materializer
from factstream.embed.fake import HashingEmbedder
from factstream.store.memory import InMemoryFactStore
from factstream.topics.records import fact_id_for
from factstream_lab.eval.locomo.data import Conversation, Session, Turn
from factstream_lab.eval.locomo.kb_turns import EmbedWindow, load_turns, window_text

WHEN = datetime(2023, 2, 1, 9, tzinfo=UTC)


def _session(*said: str) -> Session:
    turns = tuple(
        Turn(f"D1:{i}", "Jon" if i % 2 else "Gina", text) for i, text in enumerate(said, 1)
    )
    return Session(1, WHEN, turns)


def test_a_window_holds_the_turns_around_a_passage_within_its_session() -> None:
    session = _session("a", "b", "c", "d")
    assert window_text(session, 1, EmbedWindow()) == "Gina: b"
    assert window_text(session, 1, EmbedWindow(1, 0)) == "Jon: a\nGina: b"
    assert window_text(session, 1, EmbedWindow(1, 1)) == "Jon: a\nGina: b\nJon: c"
    assert window_text(session, 3, EmbedWindow(0, 5)) == "Gina: d"  # nothing after the last
    assert window_text(session, 0, EmbedWindow(9, 0)) == "Jon: a"


def _load(window: EmbedWindow) -> tuple[InMemoryFactStore, dict[str, tuple[str, ...]]]:
    session = _session("How did the kids like the memorial?", "They were awestruck.", "Thanks!")
    conversation = Conversation("7", ("Jon", "Gina"), (session,), ())
    store = InMemoryFactStore()
    materializer = Materializer(store, HashingEmbedder())
    cited = asyncio.run(load_turns(materializer, conversation, "ns", 0, window))
    return store, cited


def test_a_passage_is_embedded_with_its_window_and_keeps_its_own_text_and_turn() -> None:
    store, cited = _load(EmbedWindow(1, 0))
    reply = fact_id_for("ns", "locomo-7-s1", 1)
    stored = asyncio.run(store.get_stored("ns", [reply]))[reply]
    assert stored.fact.text == "Gina: They were awestruck."
    assert cited[reply] == ("D1:2",)
    embedder = HashingEmbedder()
    window = "Jon: How did the kids like the memorial?\nGina: They were awestruck."
    assert list(stored.vector) == embedder.vector(window)
    assert list(stored.vector) != embedder.vector(stored.fact.text)


def test_without_a_window_a_passage_is_embedded_alone() -> None:
    store, _ = _load(EmbedWindow())
    reply = fact_id_for("ns", "locomo-7-s1", 1)
    stored = asyncio.run(store.get_stored("ns", [reply]))[reply]
    assert list(stored.vector) == HashingEmbedder().vector("Gina: They were awestruck.")
