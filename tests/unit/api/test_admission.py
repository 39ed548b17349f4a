"""Admission: requests over the in-flight limit get 429 with Retry-After; probes never do."""

from __future__ import annotations

import asyncio

import httpx
from starlette.types import Receive, Scope, Send

from factstream.api.limits import Admission


class Held:
    """An ASGI app that answers 200 once released."""

    def __init__(self) -> None:
        self.release, self.entered = asyncio.Event(), 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.entered += 1
        await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


async def test_over_the_limit_is_429_with_retry_after_and_probes_pass() -> None:
    held = Held()
    transport = httpx.ASGITransport(app=Admission(held, max_in_flight=2))
    async with httpx.AsyncClient(transport=transport, base_url="http://api") as http:
        first = [asyncio.create_task(http.post("/v1/ask")) for _ in range(2)]
        while held.entered < 2:
            await asyncio.sleep(0.01)
        refused = await http.post("/v1/ask")
        assert refused.status_code == 429 and refused.headers["retry-after"] == "1"
        assert "2 requests in flight" in refused.json()["detail"]
        probes = [asyncio.create_task(http.get(p)) for p in ("/healthz", "/readyz", "/metrics")]
        while held.entered < 5:
            await asyncio.sleep(0.01)
        held.release.set()
        assert [r.status_code for r in await asyncio.gather(*first, *probes)] == [200] * 5
        assert (await http.post("/v1/ask")).status_code == 200  # slots are given back
