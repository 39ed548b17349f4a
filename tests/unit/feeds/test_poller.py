"""The poll loop with a scripted HTTP server and an in-memory publisher: versions, errors,
backoff, isolation of bad feeds."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import httpx
from prometheus_client import CollectorRegistry

from factstream.config import FeedSettings
from factstream.feeds.config import FeedSpec
from factstream.feeds.fetch import FeedFetcher
from factstream.feeds.poller import FeedPoller
from factstream.feeds.state import FeedState, Publication
from factstream.metrics import FeedMetrics

DATA = Path(__file__).resolve().parents[2] / "data" / "feeds"
GOOD = FeedSpec(url="https://good.example/rss", namespace="desk", name="good")
BAD = FeedSpec(url="https://bad.example/rss", namespace="desk", name="bad")


class MemoryPublisher:
    def __init__(self) -> None:
        self.published: list[Publication] = []

    async def publish(self, publications: Sequence[Publication]) -> None:
        self.published += publications


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make(
    responses: dict[str, httpx.Response], state: FeedState | None = None
) -> tuple[FeedPoller, MemoryPublisher, FeedMetrics, Clock]:
    def answer(request: httpx.Request) -> httpx.Response:
        return responses[str(request.url)]

    settings = FeedSettings(min_host_interval_s=0, interval_s=300, backoff_base_s=60)
    publisher, metrics, clock = MemoryPublisher(), FeedMetrics.create(CollectorRegistry()), Clock()
    fetcher = FeedFetcher(settings, transport=httpx.MockTransport(answer))
    poller = FeedPoller(
        [GOOD, BAD],
        settings,
        fetcher,
        publisher,
        state if state is not None else {},
        metrics,
        clock,
    )
    return poller, publisher, metrics, clock


def value(metrics: FeedMetrics, name: str, **labels: str) -> float:
    """A counter's value (the container keeps no registry handle, so read the child)."""
    [metric] = getattr(metrics, name).labels(**labels).collect()
    [total] = [s for s in metric.samples if s.name.endswith("_total")]
    return float(total.value)


async def test_new_and_edited_entries_are_published_once_and_bad_feeds_do_not_stop_others() -> None:
    rss = (DATA / "rss.xml").read_bytes()
    responses = {
        str(GOOD.url): httpx.Response(200, content=rss),
        str(BAD.url): httpx.Response(200, content=b"<html>oops</html>"),
    }
    poller, publisher, metrics, _ = make(responses)
    first = await poller.poll_once()
    assert [r.outcome for r in first] == ["ok", "error"]
    assert len(publisher.published) == 3
    assert {p.document.metadata["feed_version"] for p in publisher.published} == {"1"}

    # The same body again: nothing new.
    await poller.poll_once(force=True)
    assert len(publisher.published) == 3

    # One entry edited: a new version with a new document id.
    responses[str(GOOD.url)] = httpx.Response(200, content=rss.replace(b"on Tuesday", b"on Monday"))
    third = await poller.poll_once(force=True)
    [edited] = third[0].published
    original = publisher.published[0].document
    assert edited.id != original.id
    assert edited.metadata["feed_entry_id"] == original.metadata["feed_entry_id"]
    assert edited.metadata["feed_version"] == "2"
    assert "on Monday" in edited.text

    assert value(metrics, "entries", feed="good", change="new") == 3
    assert value(metrics, "entries", feed="good", change="updated") == 1
    assert value(metrics, "errors", feed="bad", kind="not_a_feed") == 3
    assert value(metrics, "polls", feed="good", outcome="ok") == 3


async def test_a_restart_with_the_same_state_publishes_nothing() -> None:
    rss = (DATA / "rss.xml").read_bytes()
    responses = {
        str(GOOD.url): httpx.Response(200, content=rss),
        str(BAD.url): httpx.Response(304),
    }
    poller, publisher, _, _ = make(responses)
    await poller.poll_once()
    state = {(p.state.namespace, p.state.entry_id): p.state for p in publisher.published}
    again, republished, _, _ = make(responses, state)
    results = await again.poll_once()
    assert results[0].outcome == "ok" and results[1].outcome == "not_modified"
    assert republished.published == []


async def test_failures_back_off_and_success_resets() -> None:
    responses = {
        str(GOOD.url): httpx.Response(503, headers={"Retry-After": "5"}),
        str(BAD.url): httpx.Response(429, headers={"Retry-After": "5"}),
    }
    poller, _, metrics, clock = make(responses)
    await poller.poll_once()
    assert poller.seconds_until_due() == 60  # the 503: first backoff step
    clock.now += 60
    assert [r.feed.name for r in await poller.poll_once()] == ["good"]  # 429 waits the interval
    assert poller.seconds_until_due() == 120  # second failure doubles
    responses[str(GOOD.url)] = httpx.Response(200, content=(DATA / "atom.xml").read_bytes())
    clock.now += 120
    assert [r.outcome for r in await poller.poll_once()] == ["ok"]
    assert poller.seconds_until_due() == 120  # bad (429) is due 300 s after its poll
    assert value(metrics, "errors", feed="good", kind="server_error") == 2
    assert value(metrics, "errors", feed="bad", kind="rate_limited") == 1
