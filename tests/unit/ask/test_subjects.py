"""Preferring the facts whose subject the question names (factstream.ask.subjects)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from fixtures.bitemporal import edit

from factstream.ask.common_words import common_names
from factstream.ask.query import AskRequest, QueryEngine
from factstream.ask.subjects import favour_subjects
from factstream.config import ApiSettings
from factstream.edit.materializer import Materializer
from factstream.embed.fake import HashingEmbedder
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.store.base import SearchHit
from factstream.store.memory import InMemoryFactStore
from factstream.topics.records import EditOp, Fact, HistoryEntry

NOW = datetime(2025, 6, 1, tzinfo=UTC)
HERS = "Caroline: I painted a sunset."
OTHER = "Melanie: Caroline, I painted a lake."
TURNS = (HERS, OTHER, "Caroline: hi Melanie", "Melanie: hello Caroline")


def test_common_names_are_the_capitalised_words_left_out() -> None:
    common = frozenset({"caroline", "melanie"})
    assert common_names("What did Caroline's friend Melanie paint?", common) == [
        "Caroline's",
        "Melanie",
    ]
    assert common_names("What did Bob paint?", common) == []


def _hit(text: str, score: float) -> SearchHit:
    entry = HistoryEntry(ts=NOW, truth=True, document_id="d1", edit_id=f"e-{text}")
    fact = Fact(
        fact_id=f"f-{text}",
        namespace="desk",
        text=text,
        truth=True,
        history=[entry],
        first_seen=NOW,
        last_changed=NOW,
    )
    return SearchHit(fact=fact, similarity=0.5, score=score)


def test_the_bonus_lifts_the_named_subjects_facts_above_the_cut() -> None:
    hits = [_hit("Melanie: a lake", 0.9), _hit("Melanie: a pond", 0.8), _hit(HERS, 0.75)]
    kept = favour_subjects(hits, ["Caroline's"], 0.1, 2)
    assert [h.fact.text for h in kept] == ["Melanie: a lake", HERS]
    assert favour_subjects(hits, ["Caroline"], 0.0, 2) == hits[:2]
    assert favour_subjects(hits, [], 0.5, 2) == hits[:2]


@pytest.fixture
async def store() -> InMemoryFactStore:
    store = InMemoryFactStore()
    materializer = Materializer(store, HashingEmbedder())
    await materializer.apply(
        [edit("d1", i, len(TURNS), EditOp.ADD, t, NOW) for i, t in enumerate(TURNS)]
    )
    return store


async def test_the_engine_favours_the_named_speaker_only_with_a_bonus(
    store: InMemoryFactStore,
) -> None:
    runner = TaskRunner(ScriptedLM([]))
    for bonus, expected in ((0.0, OTHER), (1.0, HERS)):
        settings = ApiSettings(min_similarity=-1.0, drop_common_words=True, subject_bonus=bonus)
        engine = QueryEngine(store, HashingEmbedder(), runner, settings, alpha=0.0)
        found = await engine.retrieve(
            AskRequest("What has Caroline painted at the lake?", "desk", top_k=1),
            question_time=False,
        )
        assert [f.fact.text for f in found] == [expected]
