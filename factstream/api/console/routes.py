"""The web console at /ui: server-rendered pages and fragments, and a small script.

Pages (``/ui``, ``/ui/facts``, ...) are shells that hold no data and need no key, so a
browser can open them as links. The script (``static/console.js``) keeps the API key in
sessionStorage, never in a URL, and fetches the fragments (``/ui/f/...``) with it as a
bearer token: each fragment checks the key's grant for its namespace, as the API does, and
comes back as HTML rendered here (autoescaped), or as an error with its status.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, StreamingResponse
from fastapi.templating import Jinja2Templates
from pydantic import AwareDatetime

from factstream.api.auth import ApiKey
from factstream.api.console.timeline import WIDTH, layout
from factstream.api.routes import CURSOR_PATTERN, find_facts
from factstream.api.schemas import FactOut, Namespace
from factstream.api.state import State
from factstream.errors import FactNotFound
from factstream.streams.browse import count_keyed, follow_changelog, record_at
from factstream.streams.changelog import read_changelog
from factstream.temporal.intervals import at
from factstream.topics.definitions import TopicName
from factstream.topics.records import Document, EditOp, FactEdit

__all__ = ["STATIC_DIR", "router"]

STATIC_DIR = Path(__file__).parent / "static"
templates = Jinja2Templates(directory=Path(__file__).parent / "templates")
router = APIRouter(prefix="/ui", include_in_schema=False)

NamespaceQuery = Annotated[Namespace, Query()]
AsOf = Annotated[AwareDatetime | None, Query()]
_PAGES = {"ask": "Ask", "facts": "Facts", "feed": "Live edits", "overview": "Overview"}
_OVERVIEW_DAYS = 30
_PAGE = 20  # facts per page of the console's list


def _page(request: Request, name: str, **context: Any) -> HTMLResponse:
    return templates.TemplateResponse(
        request, f"{name}.html", {"pages": _PAGES, "page": name, **context}
    )


def _fragment(request: Request, name: str, **context: Any) -> HTMLResponse:
    return templates.TemplateResponse(request, f"fragments/{name}.html", context)


# -- pages: no data, no key ---------------------------------------------------------------


@router.get("", response_class=HTMLResponse)
async def ask_page(request: Request) -> HTMLResponse:
    """Log in, pick a namespace, ask (the answer streams in) and see the cited facts."""
    return _page(request, "ask")


@router.get("/facts", response_class=HTMLResponse)
async def facts_page(request: Request) -> HTMLResponse:
    """Search or list the namespace's facts, page by page."""
    return _page(request, "facts")


@router.get("/facts/{fact_id}", response_class=HTMLResponse)
async def fact_page(request: Request, fact_id: str) -> HTMLResponse:
    """One fact and its timeline."""
    return _page(request, "fact", fact_id=fact_id)


@router.get("/documents/{document_id}", response_class=HTMLResponse)
async def document_page(request: Request, document_id: str) -> HTMLResponse:
    """One document and the edits it made."""
    return _page(request, "document", document_id=document_id)


@router.get("/feed", response_class=HTMLResponse)
async def feed_page(request: Request) -> HTMLResponse:
    """The namespace's edits as they are committed."""
    return _page(request, "feed")


@router.get("/overview", response_class=HTMLResponse)
async def overview_page(request: Request) -> HTMLResponse:
    """Facts true and false, edits by op per day, dead letters and review items."""
    return _page(request, "overview")


# -- fragments: the key's grant decides -------------------------------------------------


@router.get("/f/namespaces", response_class=HTMLResponse)
async def namespaces(request: Request, key: ApiKey, state: State) -> HTMLResponse:
    """The namespaces the key may read, as options of the namespace picker."""
    grant = state.keys.grant_for(key)
    known = await state.clients.store.namespaces()
    readable = sorted(n for n in known if grant.allows("read", n))
    return _fragment(request, "namespaces", namespaces=readable)


@router.get("/f/facts", response_class=HTMLResponse)
async def facts(
    request: Request,
    key: ApiKey,
    state: State,
    namespace: NamespaceQuery,
    q: str | None = None,
    as_of: AsOf = None,
    valid_at: AsOf = None,
    include_false: bool = False,
    cursor: Annotated[str | None, Query(pattern=CURSOR_PATTERN)] = None,
) -> HTMLResponse:
    """A page of facts (searched when ``q`` is given), with the next page's cursor."""
    state.keys.check(key, "read", namespace)
    valid = at(valid_at) if valid_at is not None else None
    page = await find_facts(state, namespace, q, as_of, valid, include_false, _PAGE, cursor)
    return _fragment(
        request,
        "facts",
        facts=page.facts,
        cursor=page.cursor,
        namespace=namespace,
        searched=bool(q),
    )


@router.get("/f/facts/{fact_id}", response_class=HTMLResponse)
async def fact(
    request: Request,
    fact_id: str,
    key: ApiKey,
    state: State,
    namespace: NamespaceQuery,
    as_of: AsOf = None,
) -> HTMLResponse:
    """One fact as of a time: truth, valid interval, and its history as a timeline."""
    state.keys.check(key, "read", namespace)
    found = await state.clients.store.get(namespace, [fact_id])
    if fact_id not in found:
        raise FactNotFound(namespace, fact_id)
    shown = FactOut.of(found[fact_id], as_of)
    timeline = layout(shown.history, shown.valid_from, shown.valid_to) if shown.history else None
    return _fragment(
        request, "fact", fact=shown, timeline=timeline, width=WIDTH, namespace=namespace
    )


@router.get("/f/documents/{document_id}", response_class=HTMLResponse)
async def document(
    request: Request, document_id: str, key: ApiKey, state: State, namespace: NamespaceQuery
) -> HTMLResponse:
    """A document's edits from the changelog, and its text where the input topic keeps it."""
    state.keys.check(key, "read", namespace)
    edits = [
        edit
        async for edit in read_changelog(state.kafka)
        if edit.namespace == namespace and edit.document_id == document_id
    ]
    text: Document | None = None
    if edits:
        where = edits[0].input
        raw = await record_at(state.kafka, where.topic, where.partition, where.offset)
        text = Document.from_bytes(raw) if raw is not None else None
    return _fragment(
        request, "document", edits=edits, document=text, namespace=namespace, id=document_id
    )


@router.get("/f/overview", response_class=HTMLResponse)
async def overview(
    request: Request, key: ApiKey, state: State, namespace: NamespaceQuery
) -> HTMLResponse:
    """Counts: facts true and false, edits by op per day (the last 30), dead letters, reviews."""
    state.keys.check(key, "read", namespace)
    counts = await state.clients.store.count_facts(namespace)
    by_day: Counter[tuple[str, EditOp]] = Counter()
    async for edit in read_changelog(state.kafka):
        if edit.namespace == namespace:
            by_day[(edit.event_time.date().isoformat(), edit.op)] += 1
    days = sorted({day for day, _ in by_day})[-_OVERVIEW_DAYS:]
    rows = [(day, [by_day[(day, op)] for op in EditOp]) for day in days]
    most = max((n for _, ns in rows for n in ns), default=0)
    return _fragment(
        request,
        "overview",
        counts=counts,
        ops=list(EditOp),
        rows=rows,
        most=most,
        total=sum(by_day.values()),
        dead_letters=await count_keyed(state.kafka, TopicName.DOCUMENTS_DLQ, namespace),
        reviews=await count_keyed(state.kafka, TopicName.REVIEW, namespace),
        namespace=namespace,
    )


@router.get("/f/feed")
async def feed(
    request: Request, key: ApiKey, state: State, namespace: NamespaceQuery
) -> StreamingResponse:
    """Server-sent events: ``ready`` once following, then an ``edit`` (its HTML) per edit."""
    state.keys.check(key, "read", namespace)
    row = templates.get_template("fragments/edit.html")

    async def events() -> AsyncIterator[str]:
        first = True
        async for edits in follow_changelog(state.kafka, namespace):
            if first:
                yield "event: ready\ndata: {}\n\n"
                first = False
            elif not edits:
                yield ": idle\n\n"  # a client that went away is noticed here
            for edit in edits:
                html = row.render(edit=edit, namespace=namespace)
                yield f"event: edit\ndata: {json.dumps({'html': html})}\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


def edit_summary(edit: FactEdit) -> str:
    """One line saying what an edit did."""
    if edit.op is EditOp.REWRITE and edit.previous_text:
        return f"rewrote “{edit.previous_text}” as “{edit.text}”"
    return f"{edit.op.value}: {edit.text}"


def when(value: datetime | None) -> str:
    """A time for people: the date, with the time of day unless it is midnight UTC."""
    if value is None:
        return "open"
    text = value.strftime("%Y-%m-%d %H:%M")
    return text.removesuffix(" 00:00")


templates.env.filters["when"] = when
templates.env.filters["summary"] = edit_summary
