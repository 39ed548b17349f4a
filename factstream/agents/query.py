"""The query agent on Kafka: factstream.questions in, factstream.answers out (by question id).

Same logic as ``POST /v1/ask`` (ask/query.py) and the same authorisation: a question
record carries the API key in its ``authorization`` header (``Bearer KEY``, as over HTTP),
which must allow reading the record's namespace; the record's Kafka key must be that
namespace. Whatever goes wrong is answered: an Answer with ``error`` set to
``"<code>: <message>"`` (codes: unauthenticated, forbidden, invalid, not_found,
unavailable, failed). Only a record without a readable question id and namespace cannot be
answered; it is logged and skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import orjson
from pydantic import ValidationError

from factstream.access import KeyTable, load_key_table
from factstream.ask.query import AskRequest, QueryEngine
from factstream.clients import Clients
from factstream.config import Settings
from factstream.errors import (
    FactstreamError,
    Forbidden,
    LMUnavailable,
    NamespaceNotFound,
    QuestionInvalid,
    StoreUnavailable,
    Unauthenticated,
)
from factstream.metrics import QueryMetrics
from factstream.topics.definitions import TopicName, topic_name
from factstream.topics.records import Answer, Question

__all__ = [
    "AUTH_HEADER",
    "ClientsProvider",
    "QuestionHandler",
    "error_code",
    "key_from_headers",
    "register_query_agent",
]

AUTH_HEADER = "authorization"
ClientsProvider = Callable[[], Awaitable[Clients]]
log = logging.getLogger(__name__)

_CODES: list[tuple[type[FactstreamError], str]] = [
    (Unauthenticated, "unauthenticated"),
    (Forbidden, "forbidden"),
    (QuestionInvalid, "invalid"),
    (NamespaceNotFound, "not_found"),
    (LMUnavailable, "unavailable"),
    (StoreUnavailable, "unavailable"),
]


def error_code(exc: FactstreamError) -> str:
    """The code an error answer starts with."""
    return next((code for kind, code in _CODES if isinstance(exc, kind)), "failed")


def key_from_headers(headers: Sequence[tuple[str, bytes]] | dict[str, bytes] | None) -> str | None:
    """The API key of an ``authorization: Bearer KEY`` header, if any."""
    items = headers.items() if isinstance(headers, dict) else (headers or [])
    for name, value in items:
        if name.lower() == AUTH_HEADER:
            scheme, _, token = value.decode(errors="replace").partition(" ")
            return token.strip() if scheme.lower() == "bearer" and token.strip() else None
    return None


def _ids(raw: bytes | None) -> tuple[str, str] | None:
    # For an answer to a question that does not validate: its id and namespace, if readable.
    try:
        data: Any = orjson.loads(raw or b"")
        probe = Answer(question_id=data["id"], namespace=data["namespace"])
    except (orjson.JSONDecodeError, KeyError, TypeError, ValidationError):
        return None
    return probe.question_id, probe.namespace


class QuestionHandler:
    """Turns one question record into its answer record."""

    def __init__(
        self, engine: QueryEngine, keys: KeyTable, metrics: QueryMetrics | None = None
    ) -> None:
        self._engine, self._keys, self._metrics = engine, keys, metrics

    async def handle(
        self, key: bytes | None, value: bytes | None, api_key: str | None
    ) -> Answer | None:
        """The answer to publish (keyed by its question id), or None if none can be addressed."""
        answer = await self._answer(key, value, api_key)
        if self._metrics is not None:
            outcome = "skipped" if answer is None else "answered"
            if answer is not None and answer.error:
                outcome = answer.error.partition(":")[0]
            self._metrics.questions.labels(outcome).inc()
            if answer is not None and not answer.error:
                self._metrics.observe_ask(answer.timings)
        return answer

    async def _answer(
        self, key: bytes | None, value: bytes | None, api_key: str | None
    ) -> Answer | None:
        try:
            question = Question.from_bytes(value or b"")
        except (orjson.JSONDecodeError, ValidationError) as exc:
            ids = _ids(value)
            if ids is None:
                log.warning("question without a readable id and namespace skipped: %s", exc)
                return None
            reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            return Answer(question_id=ids[0], namespace=ids[1], error=f"invalid: {reason}")
        try:
            self._keys.check(api_key, "read", question.namespace)
            if key is not None and key.decode(errors="replace") != question.namespace:
                raise QuestionInvalid("the record key is not the question's namespace")
            result = await self._engine.ask(AskRequest.from_question(question))
        except FactstreamError as exc:
            log.info("question %s not answered: %s", question.id, exc)
            return Answer(
                question_id=question.id,
                namespace=question.namespace,
                error=f"{error_code(exc)}: {exc}",
            )
        return result.to_record(question.id, question.namespace)


def register_query_agent(app: Any, settings: Settings, clients: ClientsProvider) -> None:
    """Add the query agent to a faust app: questions in, answers out, keyed by question id."""
    import faust

    prefix = settings.kafka.topic_prefix
    raw = {
        "key_type": bytes,
        "value_type": bytes,
        "key_serializer": "raw",
        "value_serializer": "raw",
    }
    questions = app.topic(topic_name(TopicName.QUESTIONS, prefix), **raw)
    answers = app.topic(topic_name(TopicName.ANSWERS, prefix), **raw)
    keys = load_key_table(settings.api)

    @app.agent(questions, name="query")  # type: ignore[untyped-decorator]  # faust is untyped
    async def query(stream: faust.StreamT[bytes]) -> None:
        used = await clients()
        engine = QueryEngine.of(used, settings)
        handler = QuestionHandler(engine, keys, used.metrics.query)
        async for event in stream.events():
            msg = event.message
            answer = await handler.handle(msg.key, msg.value, key_from_headers(msg.headers))
            if answer is not None:
                await answers.send(key=answer.question_id.encode(), value=answer.to_bytes())
                log.info("answered question %s (error: %s)", answer.question_id, answer.error)
