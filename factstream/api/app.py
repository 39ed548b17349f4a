"""The FastAPI app factory: clients injected (tests) or built by the lifespan (`factstream api`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager

from fastapi import FastAPI, Request, Response, status
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles

from factstream.access import KeyTable, load_key_table
from factstream.api.console.routes import STATIC_DIR
from factstream.api.console.routes import router as console
from factstream.api.limits import Admission, BodyLimit
from factstream.api.metrics import ApiMetrics
from factstream.api.routes import router
from factstream.api.state import ApiState
from factstream.ask.query import QueryEngine
from factstream.clients import Clients, open_clients
from factstream.config import Settings
from factstream.errors import (
    FactstreamError,
    Forbidden,
    IntervalInvalid,
    LMOutputInvalid,
    LMUnavailable,
    QueryError,
    QuestionInvalid,
    StoreUnavailable,
    Unauthenticated,
)

__all__ = ["create_app", "status_of"]

_STATUS: list[tuple[type[FactstreamError], int]] = [
    (Unauthenticated, status.HTTP_401_UNAUTHORIZED),
    (Forbidden, status.HTTP_403_FORBIDDEN),
    (QuestionInvalid, status.HTTP_422_UNPROCESSABLE_CONTENT),
    (IntervalInvalid, status.HTTP_422_UNPROCESSABLE_CONTENT),
    (QueryError, status.HTTP_404_NOT_FOUND),
    (LMUnavailable, status.HTTP_503_SERVICE_UNAVAILABLE),
    (StoreUnavailable, status.HTTP_503_SERVICE_UNAVAILABLE),
    (LMOutputInvalid, status.HTTP_502_BAD_GATEWAY),
]


def status_of(exc: FactstreamError) -> int:
    """The HTTP status of an error (502 for other failures of the services behind us)."""
    return next((code for kind, code in _STATUS if isinstance(exc, kind)), 502)


async def _error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, FactstreamError)  # noqa: S101 - registered for FactstreamError only
    code = status_of(exc)
    headers = {"WWW-Authenticate": "Bearer"} if isinstance(exc, Unauthenticated) else None
    return JSONResponse({"detail": str(exc)}, status_code=code, headers=headers)


async def _invalid(request: Request, exc: Exception) -> Response:
    # FastAPI's own handler echoes the rejected input, and fails with a 500 when that input
    # is bytes that are not UTF-8; a 422 says where and what, never the input back.
    assert isinstance(exc, RequestValidationError)  # noqa: S101 - registered for it only
    detail = [{"type": e["type"], "loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors()]
    return JSONResponse({"detail": detail}, status_code=status.HTTP_422_UNPROCESSABLE_CONTENT)


def create_app(
    settings: Settings, *, clients: Clients | None = None, keys: KeyTable | None = None
) -> FastAPI:
    """The API app. Given ``clients`` it uses (and leaves open) them; else it builds its own."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as opened:
            used = clients
            if used is None:  # our own: closed as the app stops
                used = await opened.enter_async_context(open_clients(settings))
            engine = QueryEngine.of(used, settings)
            state = ApiState(
                used,
                engine,
                keys if keys is not None else load_key_table(settings.api),
                ApiMetrics.create(used.metrics),
                settings.api,
                settings.kafka,
                settings.lm,
            )
            opened.push_async_callback(state.aclose)
            app.state.api = state
            yield

    app = FastAPI(
        title="factstream",
        summary="Answers from facts that follow the news (ERASE on Kafka and Weaviate).",
        version="0.1.0",
        lifespan=lifespan,
    )
    app.include_router(router)
    app.include_router(console)  # the web console, /ui (factstream/api/console)
    app.mount("/ui/static", StaticFiles(directory=STATIC_DIR), name="console-static")
    app.add_exception_handler(FactstreamError, _error)
    app.add_exception_handler(RequestValidationError, _invalid)

    @app.middleware("http")
    async def count(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        response = await call_next(request)
        route = request.scope.get("route")
        template = getattr(route, "path", "unmatched")
        if hasattr(request.app.state, "api"):
            request.app.state.api.metrics.requests.labels(
                template, request.method, str(response.status_code)
            ).inc()
        return response

    app.add_middleware(BodyLimit, max_bytes=settings.api.max_body_bytes)
    app.add_middleware(Admission, max_in_flight=settings.api.max_in_flight)  # outermost
    return app
