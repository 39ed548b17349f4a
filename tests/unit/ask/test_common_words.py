"""Searching without the words most of a namespace's facts contain (factstream.ask.common_words)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fixtures.bitemporal import edit
from fixtures.keyword_search import keyword_hits

from factstream.ask.common_words import leave_out, search_words, without_common_words
from factstream.ask.query import AskRequest, QueryEngine
from factstream.config import ApiSettings
from factstream.edit.materializer import Materializer
from factstream.embed.fake import HashingEmbedder
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.store.memory import InMemoryFactStore
from factstream.topics.records import EditOp

NOW = datetime(2025, 6, 1, tzinfo=UTC)
GREETING = "Melanie: hi there, how was the week?"
PETS = "Melanie: the pets are napping."
HELLO = "Caroline: hello Melanie!"


def test_search_words_split_as_the_keyword_index_does() -> None:
    assert search_words("What are Melanie's pets? Melanie's!") == [
        "what",
        "are",
        "melanie",
        "s",
        "pets",
    ]


def test_leave_out_drops_common_words_and_their_possessives() -> None:
    common = frozenset({"melanie", "caroline"})
    assert leave_out("Did Melanie's friend Caroline paint?", common) == "Did friend paint?"
    assert leave_out("Melanie and Caroline?", frozenset({"melanie"})) == "and Caroline?"
    assert leave_out("Melanie, Caroline?", common) == "Melanie, Caroline?"  # nothing else left
    assert leave_out("Who paints?", frozenset()) == "Who paints?"


@pytest.fixture
async def store() -> InMemoryFactStore:
    store = InMemoryFactStore()
    materializer = Materializer(store, HashingEmbedder())
    await materializer.apply(
        [edit("d1", i, 3, EditOp.ADD, text, NOW) for i, text in enumerate((GREETING, PETS, HELLO))]
    )
    return store


async def test_the_store_names_the_words_in_most_facts(store: InMemoryFactStore) -> None:
    words = ["Melanie", "caroline", "pets", "unknown"]
    assert await store.common_words("desk", words, as_of=None) == {"melanie"}
    assert await store.common_words("nowhere", words, as_of=None) == frozenset()
    question = "What pets does Melanie have?"
    assert await without_common_words(store, "desk", question, None) == "What pets does have?"


async def _keyword_hits(store: InMemoryFactStore, question: str, drop: bool) -> list[str]:
    return await keyword_hits(store, question, NOW, drop_common_words=drop)


async def test_the_search_leaves_common_words_out_only_when_asked(
    store: InMemoryFactStore,
) -> None:
    # Every fact has "Melanie": as asked, each matches; without it only the pets match.
    assert len(await _keyword_hits(store, "Melanie's pets?", drop=False)) == 3
    assert await _keyword_hits(store, "Melanie's pets?", drop=True) == [PETS]
    # A question of common words only is searched as asked.
    assert len(await _keyword_hits(store, "Melanie?", drop=True)) == 3


async def test_the_engine_searches_with_its_setting(store: InMemoryFactStore) -> None:
    runner = TaskRunner(ScriptedLM([]))
    for drop, expected in ((True, [PETS]), (False, [GREETING, PETS, HELLO])):
        engine = QueryEngine(
            store,
            HashingEmbedder(),
            runner,
            ApiSettings(min_similarity=-1.0, drop_common_words=drop),
            alpha=0.0,
        )
        timings: dict[str, float] = {}
        found = await engine.retrieve(
            AskRequest("Melanie's pets?", "desk"), timings, question_time=False
        )
        assert sorted(f.fact.text for f in found) == sorted(expected)
        assert ("common_words" in timings) is drop
