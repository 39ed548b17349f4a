"""The routes of docs/design.md section 6; every namespace read or write is checked by key."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query, Response, status
from fastapi.exceptions import RequestValidationError
from fastapi.responses import StreamingResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import AwareDatetime

from factstream.api.auth import ApiKey
from factstream.api.health import readiness
from factstream.api.schemas import (
    AskBody,
    AskResponse,
    DocumentsBody,
    FactOut,
    FactsPage,
    Namespace,
    PublishResponse,
    ReadyResponse,
    ValidTimeOut,
)
from factstream.api.state import ApiState, State
from factstream.ask.query import AskRequest, Gathered
from factstream.errors import FactNotFound, FactstreamError, Forbidden
from factstream.lm.json_fields import JsonFieldReader
from factstream.temporal.intervals import ValidInterval, at

__all__ = ["CURSOR_PATTERN", "find_facts", "router"]

router = APIRouter()

AsOf = Annotated[
    AwareDatetime | None,
    Query(description="Facts as they stood at this time (RFC 3339 with a zone)."),
]
NamespaceQuery = Annotated[Namespace, Query(description="The knowledge base.")]
ValidAt = Annotated[
    AwareDatetime | None,
    Query(
        description="Only facts that held in the world at this instant (RFC 3339 with a "
        "zone). Not with valid_from/valid_to."
    ),
]
ValidFrom = Annotated[
    AwareDatetime | None,
    Query(
        description="Only facts that held at some time from this instant on (with valid_to: "
        "in [valid_from, valid_to))."
    ),
]
ValidTo = Annotated[
    AwareDatetime | None,
    Query(description="Only facts that held at some time before this instant (exclusive)."),
]
# What a page's cursor is (store/rules.py order_key: the hex of a fact id's UTF-8 bytes);
# anything else was never issued, so it is refused rather than read as a position.
CURSOR_PATTERN = r"^(?:[0-9a-f]{2}){1,1024}$"


@router.post("/v1/ask", response_model=AskResponse, tags=["query"])
async def ask(body: AskBody, key: ApiKey, state: State) -> Response:
    """Answer a question from the namespace's facts true now (or at ``as_of``).

    Bitemporal: ``as_of`` is what the knowledge base believed then; ``valid_at`` or
    ``valid_between`` what held in the world then. Without either, a time the question
    names ("in 2019", "last year", read against ``as_of`` or now) is the valid time, else
    what still holds at ``as_of`` (or now); ``valid_time`` in the reply says which.

    ``mode`` (single, multi_hop, auto) says how: one retrieval, or planned hops whose
    chain is listed in ``hops``; with the self-check on, ``rounds`` and ``confidence`` say
    what it found.

    With ``stream: true`` the reply is server-sent events: ``facts`` (the retrieved facts
    and the valid time), ``token`` for each piece the LM writes (``attempt``, the raw
    ``text``, and ``fields``: what each answer field gained, unescaped; a higher attempt
    replaces an invalid answer), then ``answer`` (the whole AskResponse) and ``done``, or
    ``error``.
    """
    state.keys.check(key, "read", body.namespace)
    request = body.to_request()
    timings: dict[str, float] = {}
    gathered = await state.engine.gather(request, timings)
    if body.stream:
        return StreamingResponse(
            _events(state, request, gathered, timings), media_type="text/event-stream"
        )
    result = await state.engine.respond(request, gathered, timings)
    timings["total"] = sum(timings.values())
    state.metrics.observe_ask(timings)
    reply = AskResponse.of(result, body.namespace, body.as_of)
    return Response(reply.model_dump_json(), media_type="application/json")


def _event(name: str, data: str) -> str:
    return f"event: {name}\ndata: {data}\n\n"


async def _events(
    state: ApiState, request: AskRequest, gathered: Gathered, timings: dict[str, float]
) -> AsyncIterator[str]:
    shown = [FactOut.used(f).model_dump(mode="json") for f in gathered.facts]
    valid = ValidTimeOut.of(gathered.valid_time).model_dump(mode="json")
    yield _event("facts", json.dumps({"facts": shown, "valid_time": valid}))
    pieces: asyncio.Queue[tuple[int, str] | None] = asyncio.Queue()

    async def on_token(attempt: int, text: str) -> None:
        await pieces.put((attempt, text))

    answering = asyncio.create_task(
        state.engine.respond(request, gathered, timings, on_token=on_token)
    )
    answering.add_done_callback(lambda _: pieces.put_nowait(None))
    readers: dict[int, JsonFieldReader] = {}  # a new attempt starts a new answer
    try:
        while (item := await pieces.get()) is not None:
            attempt, text = item
            fields = readers.setdefault(attempt, JsonFieldReader()).feed(text)
            yield _event("token", json.dumps({"attempt": attempt, "text": text, "fields": fields}))
        result = await answering
    except FactstreamError as exc:
        yield _event("error", json.dumps({"detail": str(exc)}))
        return
    finally:  # the client went away: stop the LM call
        if not answering.done():
            answering.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await answering
    timings["total"] = sum(timings.values())
    state.metrics.observe_ask(timings)
    yield _event(
        "answer", AskResponse.of(result, request.namespace, request.as_of).model_dump_json()
    )
    yield _event("done", "{}")


@router.get("/v1/facts", response_model=FactsPage, tags=["facts"])
async def list_facts(
    key: ApiKey,
    state: State,
    namespace: NamespaceQuery,
    q: Annotated[str | None, Query(description="Search for facts related to this text.")] = None,
    as_of: AsOf = None,
    valid_at: ValidAt = None,
    valid_from: ValidFrom = None,
    valid_to: ValidTo = None,
    include_false: Annotated[bool, Query(description="Include facts false at as_of.")] = False,
    limit: Annotated[int, Query(ge=1, description="Facts per page (at most the max).")] = 50,
    cursor: Annotated[
        str | None, Query(description="From the previous page.", pattern=CURSOR_PATTERN)
    ] = None,
) -> FactsPage:
    """Search (``q``) or list a namespace's facts, as of a time, page by page.

    Bitemporal like ``POST /v1/ask``: ``as_of`` is what was believed then; ``valid_at``, or
    ``valid_from``/``valid_to`` (either end may be left open), keep the facts that held in
    the world then. Only these parameters set a valid time: ``q`` is search text, never
    read for a time ("2019" is a word to match), and without them nothing is filtered by
    valid time (a fact whose interval a world change closed is still listed while true).
    """
    state.keys.check(key, "read", namespace)
    valid = _valid_filter(valid_at, valid_from, valid_to)
    return await find_facts(state, namespace, q, as_of, valid, include_false, limit, cursor)


async def find_facts(
    state: ApiState,
    namespace: str,
    q: str | None,
    as_of: datetime | None,
    valid: ValidInterval | None,
    include_false: bool,
    limit: int,
    cursor: str | None,
) -> FactsPage:
    """A page of a namespace's facts: searched for ``q`` (one page), or listed from ``cursor``."""
    limit = min(limit, state.api.max_page)
    await state.engine.require_namespace(namespace)
    if q:
        request = AskRequest(q, namespace, as_of, min(limit, state.api.max_top_k), valid=valid)
        used = await state.engine.retrieve(request, question_time=False)
        return FactsPage(facts=[FactOut.used(f) for f in used], cursor=None)
    page = await state.clients.store.list_facts(
        namespace,
        as_of=as_of,
        include_false=include_false,
        limit=limit,
        cursor=cursor,
        valid=valid,
    )
    return FactsPage(facts=[FactOut.of(f, as_of) for f in page.facts], cursor=page.cursor)


def _valid_filter(
    valid_at: datetime | None, valid_from: datetime | None, valid_to: datetime | None
) -> ValidInterval | None:
    # Refused as FastAPI refuses a query parameter: 422, where and what.
    def refuse(name: str, message: str) -> RequestValidationError:
        return RequestValidationError(
            [{"type": "value_error", "loc": ("query", name), "msg": message}]
        )

    if valid_at is not None:
        if valid_from is not None or valid_to is not None:
            raise refuse("valid_at", "give valid_at or valid_from/valid_to, not both")
        return at(valid_at)
    if valid_from is None and valid_to is None:
        return None
    if valid_from is not None and valid_to is not None and valid_from >= valid_to:
        raise refuse("valid_to", f"valid_from {valid_from} is not before valid_to {valid_to}")
    return ValidInterval(valid_from, valid_to)


@router.get("/v1/facts/{fact_id}", response_model=FactOut, tags=["facts"])
async def get_fact(
    fact_id: str, key: ApiKey, state: State, namespace: NamespaceQuery, as_of: AsOf = None
) -> FactOut:
    """One fact with its history (as of a time, if given)."""
    state.keys.check(key, "read", namespace)
    found = await state.clients.store.get(namespace, [fact_id])
    if fact_id not in found:
        raise FactNotFound(namespace, fact_id)
    return FactOut.of(found[fact_id], as_of)


@router.post(
    "/v1/documents",
    response_model=PublishResponse,
    status_code=status.HTTP_202_ACCEPTED,
    tags=["documents"],
)
async def publish_documents(body: DocumentsBody, key: ApiKey, state: State) -> PublishResponse:
    """Publish documents on factstream.documents (edited in by the worker, in order)."""
    grant = state.keys.grant_for(key)
    for namespace in sorted({d.namespace for d in body.documents}):
        if not grant.allows("publish", namespace):
            raise Forbidden(namespace, "publish")
    await state.publish(body.documents)
    return PublishResponse(published=len(body.documents), ids=[d.id for d in body.documents])


@router.get("/healthz", tags=["operations"])
async def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


@router.get("/readyz", response_model=ReadyResponse, tags=["operations"])
async def readyz(state: State, response: Response) -> ReadyResponse:
    """Kafka, Weaviate and the LM server answer; 503 with the reasons if not."""
    checks = await readiness(state.clients, state.kafka, state.lm)
    ready = all(value == "ok" for value in checks.values())
    if not ready:
        response.status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    return ReadyResponse(ready=ready, checks=checks)


@router.get("/metrics", tags=["operations"])
async def metrics(state: State) -> Response:
    """Prometheus metrics of this process."""
    return Response(generate_latest(state.clients.metrics.registry), media_type=CONTENT_TYPE_LATEST)
