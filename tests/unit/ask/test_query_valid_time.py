"""Bitemporal reads in the query agent: the valid time from the request, the question, or now."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fixtures.bitemporal import edit

from factstream.ask.query import AskRequest, QueryEngine, UsedFact, search_facts
from factstream.ask.valid_time import ValidTimeSource, question_valid_time
from factstream.config import ApiSettings
from factstream.edit.materializer import Materializer
from factstream.embed.fake import HashingEmbedder
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.store.memory import InMemoryFactStore
from factstream.temporal.intervals import ValidInterval, at, day, since, year
from factstream.topics.records import (
    EditOp,
    Question,
    ValidWindow,
    fact_id_for,
)

NOW = datetime(2025, 6, 1, tzinfo=UTC)
T0 = datetime(2023, 9, 1, tzinfo=UTC)
OLD = "Mike Lawler is a member of the New York State Assembly."
NEW = "Mike Lawler is a United States representative."


@pytest.fixture
async def store() -> InMemoryFactStore:
    """Lawler in the Assembly from 2021-01-01; the world changed on 2023-01-03 (an update)."""
    store = InMemoryFactStore()
    materializer = Materializer(store, HashingEmbedder())
    start = datetime(2021, 1, 1, tzinfo=UTC)
    await materializer.apply([edit("d1", 0, 1, EditOp.ADD, OLD, start, valid_from=start)])
    await materializer.apply(
        [
            edit(
                "d2",
                0,
                1,
                EditOp.REWRITE,
                NEW,
                T0,
                replaces=fact_id_for("desk", "d1", 0),
                change="update",
                valid_from=datetime(2023, 1, 3, tzinfo=UTC),
            )
        ]
    )
    return store


async def _texts(store: InMemoryFactStore, question: str, **kw: Any) -> list[str]:
    request = AskRequest(question, "desk", valid=kw.pop("valid", None), as_of=kw.pop("as_of", None))
    retrieval = await search_facts(
        store, HashingEmbedder(), request, top_k=5, min_similarity=-1.0, alpha=0.5, now=NOW, **kw
    )
    return [f.fact.text for f in retrieval.facts]


async def test_the_question_names_the_valid_time(store: InMemoryFactStore) -> None:
    assert await _texts(store, "What was Mike Lawler's position in 2022?") == [OLD]
    assert await _texts(store, "On 2024-02-01, what was Mike Lawler's position?") == [NEW]
    # Over 2023 both held, one after the other.
    assert sorted(await _texts(store, "What was Lawler's position in 2023?")) == sorted([OLD, NEW])


async def test_without_a_time_the_question_reads_what_holds_now(store: InMemoryFactStore) -> None:
    assert await _texts(store, "What is Mike Lawler's position?") == [NEW]
    assert sorted(await _texts(store, "What is Lawler's position?", valid_time=False)) == sorted(
        [OLD, NEW]
    )  # no valid-time filter: the closed fact is still true
    # The request's own valid time wins over the question's.
    assert await _texts(store, "Lawler's position in 2024?", valid=day(T0.date())) == [NEW]
    assert await _texts(store, "Lawler's position in 2024?", valid=year(2022)) == [OLD]


async def test_as_of_and_valid_time_together(store: InMemoryFactStore) -> None:
    """Before the update was known (as of 2023-06-01) the old fact was believed to hold on."""
    believed = datetime(2023, 6, 1, tzinfo=UTC)
    assert await _texts(store, "What is Lawler's position?", as_of=believed) == [OLD]
    assert await _texts(store, "Lawler's position in 2022?", as_of=believed) == [OLD]


def test_question_valid_time_says_where_it_came_from() -> None:
    read = question_valid_time(
        "On March 4, 2019, what was X's employer?", valid=None, as_of=None, now=NOW
    )
    assert read.source is ValidTimeSource.QUESTION and read.expression == "On March 4, 2019"
    assert read.interval == day(datetime(2019, 3, 4).date())
    assert read.search_text == "What was X's employer?"
    assert read.describe() == '"On March 4, 2019" = 2019-03-04 to 2019-03-05'
    kept = question_valid_time("In 2019?", valid=None, as_of=None, now=NOW, strip=True)
    assert kept.search_text == "In 2019?"  # nothing would be left to search with
    whole = question_valid_time("X in 2019?", valid=None, as_of=None, now=NOW, strip=False)
    assert whole.search_text == "X in 2019?" and whole.interval == year(2019)
    current = question_valid_time("Who is X?", valid=None, as_of=T0, now=NOW)
    assert current.source is ValidTimeSource.CURRENT and current.interval == since(T0)
    assert current.window() == ValidWindow(start=T0)
    asked = question_valid_time("Who in 2019?", valid=at(T0), as_of=None, now=NOW)
    assert asked.source is ValidTimeSource.REQUEST and asked.search_text == "Who in 2019?"
    off = question_valid_time("Who in 2019?", valid=at(T0), as_of=None, now=NOW, enabled=False)
    assert off.source is ValidTimeSource.NONE and off.interval is None and off.window() is None


def test_a_kafka_question_carries_its_valid_time() -> None:
    q = Question(id="q", namespace="desk", question="Who?", valid_at=T0)
    assert AskRequest.from_question(q).valid == at(T0)
    window = ValidWindow(start=T0, end=T0 + timedelta(days=2))
    q2 = Question(id="q", namespace="desk", question="Who?", valid_between=window)
    assert AskRequest.from_question(q2).valid == ValidInterval(T0, T0 + timedelta(days=2))
    assert AskRequest.from_question(Question(id="q", namespace="desk", question="?")).valid is None


async def test_the_answer_record_says_which_valid_time_was_used(store: InMemoryFactStore) -> None:
    runner = TaskRunner(ScriptedLM(['{"reasoning": "r", "answer": "an assemblyman"}'] * 3))
    engine = QueryEngine(
        store, HashingEmbedder(), runner, ApiSettings(min_similarity=-1.0), alpha=0.5
    )
    result = await engine.ask(AskRequest("What was Lawler's position in 2022?", "desk"))
    assert [f.fact.text for f in result.facts] == [OLD]
    assert result.valid_time is not None and result.valid_time.expression == "in 2022"
    record = result.to_record("q1", "desk")
    assert record.valid_time == ValidWindow(start=year(2022).start, end=year(2022).end)
    assert record.time_expression == "in 2022"
    fact = record.facts[0]
    assert (fact.valid_from, fact.valid_to) == (
        datetime(2021, 1, 1, tzinfo=UTC),
        datetime(2023, 1, 3, tzinfo=UTC),
    )
    assert isinstance(result.facts[0], UsedFact)
