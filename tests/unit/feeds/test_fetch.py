"""Conditional GETs, size cap, error kinds and backoff decisions, without a network."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import pytest

from factstream.config import FeedSettings
from factstream.feeds.config import FeedSpec
from factstream.feeds.fetch import (
    ErrorKind,
    FeedFetcher,
    FeedFetchError,
    Validators,
    backoff_delay,
    retry_after_s,
)

FEED = FeedSpec(url="https://feeds.example.org/rss", namespace="desk", headers={"X-Token": "t"})


def fetcher(handler: httpx.MockTransport, **settings: object) -> FeedFetcher:
    return FeedFetcher(FeedSettings(min_host_interval_s=0, **settings), transport=handler)


async def test_a_conditional_get_sends_validators_and_understands_304() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.headers.get("If-None-Match") == '"v1"':
            return httpx.Response(304)
        return httpx.Response(
            200, content=b"<rss/>", headers={"ETag": '"v1"', "Last-Modified": "x"}
        )

    client = fetcher(httpx.MockTransport(answer))
    first = await client.fetch(FEED, Validators())
    second = await client.fetch(FEED, first.validators)
    await client.close()
    assert first.body == b"<rss/>" and first.validators == Validators('"v1"', "x")
    assert second.body is None and second.validators == first.validators
    assert seen[1].headers["If-Modified-Since"] == "x"
    assert seen[0].headers["X-Token"] == "t"  # the feed's own headers go along


@pytest.mark.parametrize(
    ("status", "headers", "kind", "retry_after"),
    [
        (429, {"Retry-After": "120"}, ErrorKind.RATE_LIMITED, 120.0),
        (503, {}, ErrorKind.SERVER_ERROR, None),
        (404, {}, ErrorKind.HTTP_ERROR, None),
    ],
)
async def test_http_errors_have_kinds(
    status: int, headers: dict[str, str], kind: ErrorKind, retry_after: float | None
) -> None:
    client = fetcher(httpx.MockTransport(lambda _: httpx.Response(status, headers=headers)))
    with pytest.raises(FeedFetchError) as caught:
        await client.fetch(FEED, Validators())
    await client.close()
    assert caught.value.kind is kind
    assert caught.value.retry_after_s == retry_after


async def test_huge_bodies_are_refused() -> None:
    client = fetcher(
        httpx.MockTransport(lambda _: httpx.Response(200, content=b"x" * 2000)), max_body_bytes=1000
    )
    with pytest.raises(FeedFetchError) as caught:
        await client.fetch(FEED, Validators())
    await client.close()
    assert caught.value.kind is ErrorKind.TOO_LARGE


async def test_unreachable_hosts_are_an_error_kind() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    client = fetcher(httpx.MockTransport(refuse))
    with pytest.raises(FeedFetchError) as caught:
        await client.fetch(FEED, Validators())
    await client.close()
    assert caught.value.kind is ErrorKind.UNREACHABLE


def test_backoff_doubles_up_to_the_cap_and_honours_retry_after() -> None:
    assert backoff_delay(0, 60, 3600) == 0
    assert [backoff_delay(n, 60, 3600) for n in (1, 2, 3, 7, 50)] == [60, 120, 240, 3600, 3600]
    assert backoff_delay(1, 60, 3600, retry_after=600) == 600
    assert backoff_delay(1, 60, 3600, retry_after=10**6) == 3600


def test_retry_after_as_seconds_or_http_date() -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    later = (now + timedelta(seconds=90)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert retry_after_s("30") == 30
    assert retry_after_s(later, now) == 90
    assert retry_after_s("soon") is None and retry_after_s(None) is None
