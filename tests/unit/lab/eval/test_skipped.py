"""Dead-lettered and reviewed documents are read back by id; waiting counts them as done."""

from __future__ import annotations

import base64
from datetime import UTC, datetime

import orjson

from factstream.ops.waiting import wait_applied
from factstream.store.memory import InMemoryFactStore
from factstream.topics.definitions import TopicName
from factstream.topics.records import DeadLetter
from factstream_lab.eval.skipped import document_id_of


def test_the_document_id_of_a_dead_letter_and_of_a_review_record() -> None:
    doc = orjson.dumps({"id": "w1-c003-2", "namespace": "ns", "text": "x"})
    letter = DeadLetter(
        topic="t",
        partition=0,
        offset=20,
        value=base64.b64encode(doc).decode(),
        reason="LM output invalid",
        error_type="LMOutputInvalid",
        failed_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    assert document_id_of(TopicName.DOCUMENTS_DLQ, letter.to_bytes()) == "w1-c003-2"
    assert document_id_of(TopicName.REVIEW, doc) == "w1-c003-2"
    assert document_id_of(TopicName.REVIEW, b"not json") is None
    assert document_id_of(TopicName.DOCUMENTS_DLQ, b"{}") is None


async def test_waiting_ends_when_the_rest_are_settled_otherwise() -> None:
    ticks: list[int] = []

    async def settled() -> set[str]:
        return {"dead"}

    await wait_applied(
        InMemoryFactStore(),
        "ns",
        ["dead"],
        ticks.append,
        timeout_s=5,
        poll_s=0.01,
        settled=settled,
        settled_every_s=0.05,
    )
    assert ticks == [1]
