"""Request limits before any route runs: body size (413, chunked bodies included) and
requests in flight (429 with Retry-After)."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["Admission", "BodyLimit"]

_DRAIN_FACTOR = 8
# Operators' probes and scrapes are never refused: a liveness check failing under load
# would restart a server that is only busy.
_ALWAYS_ADMITTED = frozenset({"/healthz", "/readyz", "/metrics"})
RETRY_AFTER_S = 1


async def _send_json(
    send: Send, status: int, detail: str, headers: list[tuple[bytes, bytes]]
) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class Admission:
    """ASGI middleware: at most ``max_in_flight`` requests at once; more get 429.

    Overload is answered at once with Retry-After, a 4xx the client can act on, instead of
    queueing until timeouts or the server's connection limit (which answers 503).
    """

    def __init__(self, app: ASGIApp, max_in_flight: int) -> None:
        self.app, self.max_in_flight, self.in_flight = app, max_in_flight, 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in _ALWAYS_ADMITTED:
            await self.app(scope, receive, send)
            return
        if self.in_flight >= self.max_in_flight:
            detail = f"{self.in_flight} requests in flight, the most this server takes; retry"
            retry = [(b"retry-after", str(RETRY_AFTER_S).encode())]
            await _send_json(send, 429, detail, retry)
            return
        self.in_flight += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1


class BodyLimit:
    """ASGI middleware: a body over ``max_bytes`` gets 413 and is never read past the limit.

    The body is read here first (at most ``max_bytes`` of it, which is small), then handed to
    the app; reading it here is what makes chunked bodies without a length enforceable.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await self._reject(send)
            return
        body, more = bytearray(), True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            body += message.get("body", b"")
            more = bool(message.get("more_body", False))
            if len(body) > self.max_bytes:
                await self._reject(send, receive if more else None)
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _reject(self, send: Send, rest: Receive | None = None) -> None:
        await _send_json(send, 413, f"request body larger than {self.max_bytes} bytes", [])
        # Read (and drop) a bounded rest of a chunked body, so the client sees the 413
        # instead of a connection reset mid-upload.
        drained = 0
        while rest is not None and drained < _DRAIN_FACTOR * self.max_bytes:
            message = await rest()
            drained += len(message.get("body", b""))
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
