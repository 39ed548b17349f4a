"""The keyword side of a question's search: its words' other forms (factstream.ask.keywords)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fixtures.bitemporal import edit
from fixtures.keyword_search import keyword_hits

from factstream.ask.keywords import MAX_FORMS, keyword_query, word_forms
from factstream.ask.query import AskRequest, QueryEngine
from factstream.config import ApiSettings
from factstream.edit.materializer import Materializer
from factstream.embed.fake import HashingEmbedder
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.store.memory import InMemoryFactStore
from factstream.topics.records import EditOp

NOW = datetime(2025, 6, 1, tzinfo=UTC)
SAID = "Researching adoption agencies, it has been a dream to have a family."
OTHER = "We took the kids to the beach last weekend."


def test_a_word_brings_its_lemmas_inflections() -> None:
    assert {"researching", "researched", "researches"} <= set(word_forms("research"))
    assert "research" in word_forms("researching")
    assert {"camp", "camping"} <= set(word_forms("camped"))
    assert "activity" in word_forms("activities")
    assert "took" in word_forms("take")  # irregular forms come from the tables
    assert all(len(word_forms(w)) <= MAX_FORMS for w in ("research", "go", "kids"))
    assert "research" not in word_forms("research")


def test_names_short_words_and_auxiliaries_have_no_other_forms() -> None:
    assert word_forms("Caroline") == ()
    assert word_forms("LGBTQ") == ()
    assert word_forms("is") == ()
    assert word_forms("did") == ()  # do's forms are stop words or as common
    assert word_forms("has") == ()
    assert word_forms("zzxqv") == ()  # a word the tables do not know


def test_the_keyword_query_is_the_question_then_new_forms_once() -> None:
    query = keyword_query("What did Caroline research? Research, again.")
    assert query.startswith("What did Caroline research? Research, again. ")
    added = query.removeprefix("What did Caroline research? Research, again. ").split()
    assert "researching" in added
    assert len(added) == len(set(added))
    assert "research" not in added and "did" not in added and "do" not in added
    assert keyword_query("Who is Caroline?") == "Who is Caroline?"


@pytest.fixture
async def store() -> InMemoryFactStore:
    store = InMemoryFactStore()
    materializer = Materializer(store, HashingEmbedder())
    await materializer.apply(
        [edit("d1", 0, 2, EditOp.ADD, SAID, NOW), edit("d1", 1, 2, EditOp.ADD, OTHER, NOW)]
    )
    return store


async def _keyword_hits(store: InMemoryFactStore, question: str, forms: bool) -> list[str]:
    return await keyword_hits(store, question, NOW, keyword_forms=forms)


async def test_the_search_matches_other_forms_only_when_asked(store: InMemoryFactStore) -> None:
    assert await _keyword_hits(store, "What did she research?", forms=False) == []
    assert await _keyword_hits(store, "What did she research?", forms=True) == [SAID]
    assert await _keyword_hits(store, "Whom did they take?", forms=True) == [OTHER]


async def test_the_engine_searches_with_its_setting(store: InMemoryFactStore) -> None:
    runner = TaskRunner(ScriptedLM([]))
    for forms, expected in ((True, [SAID]), (False, [])):
        engine = QueryEngine(
            store,
            HashingEmbedder(),
            runner,
            ApiSettings(min_similarity=-1.0, keyword_forms=forms),
            alpha=0.0,
        )
        found = await engine.retrieve(
            AskRequest("Who would research?", "desk"), question_time=False
        )
        assert [f.fact.text for f in found] == expected
