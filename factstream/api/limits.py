"""Request body size limit (413), before anything parses the body; chunked bodies included."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["BodyLimit"]

_DRAIN_FACTOR = 8


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
        body = json.dumps({"detail": f"request body larger than {self.max_bytes} bytes"}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})
        # Read (and drop) a bounded rest of a chunked body, so the client sees the 413
        # instead of a connection reset mid-upload.
        drained = 0
        while rest is not None and drained < _DRAIN_FACTOR * self.max_bytes:
            message = await rest()
            drained += len(message.get("body", b""))
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
