"""Fetch feeds over HTTP: conditional GETs, a minimum interval per host, a body size cap.

Failures raise FeedFetchError with a ``kind`` (a bounded metric label) and, for 429/503, the
server's Retry-After. When to try again is decided by ``backoff_delay``.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from enum import StrEnum

import httpx

from factstream.config import FeedSettings
from factstream.errors import FeedError
from factstream.feeds.config import FeedSpec

__all__ = [
    "ErrorKind",
    "FeedFetchError",
    "FeedFetcher",
    "Fetched",
    "Validators",
    "backoff_delay",
    "retry_after_s",
]


class ErrorKind(StrEnum):
    """Why a feed poll failed; the ``kind`` label of the error metric."""

    UNREACHABLE = "unreachable"  # connection refused, DNS, timeout, broken transfer
    RATE_LIMITED = "rate_limited"  # HTTP 429
    SERVER_ERROR = "server_error"  # HTTP 5xx
    HTTP_ERROR = "http_error"  # other non-2xx (404, 410, 403 ...)
    TOO_LARGE = "too_large"  # body over max_body_bytes
    NOT_A_FEED = "not_a_feed"  # not XML, HTML, empty
    BAD_ENTRY = "bad_entry"  # an entry skipped (no id, no text)
    PUBLISH = "publish"  # Kafka refused the transaction


class FeedFetchError(FeedError):
    """A feed could not be fetched; ``retry_after_s`` is the server's wish, if it said."""

    def __init__(
        self, url: str, kind: ErrorKind, reason: str, retry_after_s: float | None = None
    ) -> None:
        super().__init__(f"feed {url}: {kind.value}: {reason}")
        self.url, self.kind, self.reason, self.retry_after_s = url, kind, reason, retry_after_s


@dataclass(frozen=True)
class Validators:
    """What the server said identifies the version we have (for a conditional GET)."""

    etag: str | None = None
    last_modified: str | None = None

    def headers(self) -> dict[str, str]:
        """The conditional request headers."""
        headers = {}
        if self.etag:
            headers["If-None-Match"] = self.etag
        if self.last_modified:
            headers["If-Modified-Since"] = self.last_modified
        return headers


@dataclass(frozen=True)
class Fetched:
    """A fetch's outcome: a body, or ``body is None`` for 304 Not Modified."""

    body: bytes | None
    validators: Validators
    content_type: str | None
    fetched_at: datetime


def backoff_delay(
    failures: int, base_s: float, max_s: float, retry_after: float | None = None
) -> float:
    """Seconds to wait after ``failures`` consecutive failures (exponential, capped).

    A server's Retry-After is honoured when longer, but never beyond ``max_s``.
    """
    if failures <= 0:
        return 0.0
    delay = base_s * 2.0 ** min(failures - 1, 30)
    if retry_after is not None:
        delay = max(delay, retry_after)
    return min(delay, max_s)


def retry_after_s(value: str | None, now: datetime | None = None) -> float | None:
    """A Retry-After header (seconds or an HTTP date) in seconds from now."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class _HostSpacing:
    """At most one request per host every ``interval_s``; callers wait their turn."""

    def __init__(self, interval_s: float) -> None:
        self._interval = interval_s
        self._next: dict[str, float] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def wait(self, host: str) -> None:
        async with self._locks.setdefault(host, asyncio.Lock()):
            delay = self._next.get(host, 0.0) - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            self._next[host] = time.monotonic() + self._interval


class FeedFetcher:
    """An HTTP client for feeds; ``transport`` lets tests answer without a network."""

    def __init__(
        self, settings: FeedSettings, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self._settings = settings
        self._spacing = _HostSpacing(settings.min_host_interval_s)
        self._client = httpx.AsyncClient(
            transport=transport,
            timeout=settings.timeout_s,
            follow_redirects=True,
            headers={
                "User-Agent": settings.user_agent,
                "Accept": "application/rss+xml, application/atom+xml, application/xml;q=0.9, "
                "text/xml;q=0.9, */*;q=0.1",
            },
        )

    async def close(self) -> None:
        await self._client.aclose()

    async def fetch(self, feed: FeedSpec, validators: Validators) -> Fetched:
        """GET the feed, conditionally; raises FeedFetchError."""
        url = str(feed.url)
        await self._spacing.wait(feed.host)
        headers = {**feed.headers, **validators.headers()}
        try:
            async with self._client.stream("GET", url, headers=headers) as response:
                return await self._read(url, response, validators)
        except httpx.HTTPError as exc:
            reason = f"{type(exc).__name__}: {exc}"
            raise FeedFetchError(url, ErrorKind.UNREACHABLE, reason) from exc

    async def _read(self, url: str, response: httpx.Response, previous: Validators) -> Fetched:
        now = datetime.now(UTC)
        if response.status_code == 304:
            return Fetched(None, previous, None, now)
        _raise_for_status(url, response)
        limit = self._settings.max_body_bytes
        declared = response.headers.get("Content-Length")
        if declared and declared.isdigit() and int(declared) > limit:
            raise FeedFetchError(url, ErrorKind.TOO_LARGE, f"{declared} bytes > {limit}")
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > limit:
                raise FeedFetchError(url, ErrorKind.TOO_LARGE, f"more than {limit} bytes")
        validators = Validators(
            etag=response.headers.get("ETag"), last_modified=response.headers.get("Last-Modified")
        )
        return Fetched(bytes(body), validators, response.headers.get("Content-Type"), now)


def _raise_for_status(url: str, response: httpx.Response) -> None:
    status = response.status_code
    if 200 <= status < 300:
        return
    wait = retry_after_s(response.headers.get("Retry-After"))
    if status == 429:
        raise FeedFetchError(url, ErrorKind.RATE_LIMITED, "HTTP 429", wait)
    if status >= 500:
        raise FeedFetchError(url, ErrorKind.SERVER_ERROR, f"HTTP {status}", wait)
    raise FeedFetchError(url, ErrorKind.HTTP_ERROR, f"HTTP {status}")
