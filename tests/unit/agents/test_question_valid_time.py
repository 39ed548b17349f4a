"""Kafka questions with valid_at / valid_between: the answer record says the valid time used.

The query agent's handler on in-memory doubles holding fixtures/bitemporal.py's knowledge
base (Lawler in the Assembly until 2023-01-03, a representative since).
"""

from __future__ import annotations

import json
from typing import Any

from fixtures.bitemporal import ASSEMBLY, CHANGED, CONGRESS, HOME, SEATED, lawler_store

from factstream.access import KeyTable
from factstream.agents.query import QuestionHandler
from factstream.ask.query import QueryEngine
from factstream.config import ApiSettings
from factstream.embed.fake import HashingEmbedder
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.topics.records import Answer, ValidWindow

REPLY = '{"reasoning": "r", "answer": "a"}'


async def answer(**question: Any) -> Answer:
    lm = ScriptedLM([REPLY])
    engine = QueryEngine(
        await lawler_store(),
        HashingEmbedder(),
        TaskRunner(lm),
        ApiSettings(min_similarity=-1.0),
        alpha=0.5,
    )
    handler = QuestionHandler(engine, KeyTable(open_access=True))
    body = {"id": "q1", "namespace": "desk", "question": "Lawler's position?", **question}
    found = await handler.handle(b"desk", json.dumps(body).encode(), None)
    assert found is not None and found.error is None, found
    return found


async def test_valid_at_on_a_question_record() -> None:
    found = await answer(valid_at="2022-06-01T00:00:00Z")
    assert {f.text for f in found.facts} == {ASSEMBLY, HOME}
    assert found.valid_time is not None and found.valid_time.start is not None
    assert found.valid_time.start.isoformat() == "2022-06-01T00:00:00+00:00"
    assert found.time_expression is None
    seat = next(f for f in found.facts if f.text == ASSEMBLY)
    assert (seat.valid_from, seat.valid_to) == (SEATED, CHANGED)


async def test_valid_between_and_as_of_on_a_question_record() -> None:
    window = {"start": "2023-02-01T00:00:00Z", "end": "2023-03-01T00:00:00Z"}
    now = await answer(valid_between=window)
    assert {f.text for f in now.facts} == {CONGRESS, HOME}
    assert now.valid_time == ValidWindow.model_validate(window)
    believed = await answer(valid_between=window, as_of="2023-06-01T00:00:00Z")
    assert {f.text for f in believed.facts} == {ASSEMBLY, HOME}
    # The end of the seat was learned on 2023-09-01: as of 2023-06-01 it reads open.
    assert next(f for f in believed.facts if f.text == ASSEMBLY).valid_to is None


async def test_a_question_records_own_time_is_named_in_the_answer() -> None:
    found = await answer(question="What was Lawler's position in 2022?")
    assert found.time_expression == "in 2022" and found.valid_time is not None
    assert {f.text for f in found.facts} == {ASSEMBLY, HOME}
