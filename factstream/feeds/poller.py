"""The feed loop: poll each feed when due, publish new and changed entries, never let one
bad feed stop the others.

``run_feeds`` is the long-running mode (``factstream feeds run``; a future ``factstream up``
calls it too); ``open_poller`` gives a ready poller for one-off rounds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from factstream.config import FeedSettings, Settings
from factstream.feeds.config import FeedSpec, load_feeds
from factstream.feeds.entries import FeedEntry
from factstream.feeds.fetch import ErrorKind, FeedFetcher, FeedFetchError, Validators, backoff_delay
from factstream.feeds.parse import FeedParseError, parse_feed
from factstream.feeds.state import FeedPublisher, FeedState, Publication, read_feed_state
from factstream.metrics import FeedMetrics
from factstream.streams.admin import ensure_topics
from factstream.topics.records import Document, FeedEntryState

__all__ = ["FeedPoller", "PollResult", "open_poller", "run_feeds"]

log = logging.getLogger(__name__)
_MIN_SLEEP_S = 0.5

Outcome = Literal["ok", "not_modified", "error"]


@dataclass
class _Schedule:
    """What the poller knows about one feed between polls (in memory only)."""

    validators: Validators = field(default_factory=Validators)
    failures: int = 0
    next_due: float = 0.0
    newest: float | None = None  # epoch seconds of the newest entry seen


@dataclass(frozen=True)
class PollResult:
    """One poll of one feed."""

    feed: FeedSpec
    outcome: Outcome
    published: list[Document] = field(default_factory=list)
    error: str | None = None
    skipped: list[str] = field(default_factory=list)


class FeedPoller:
    """Polls feeds and publishes each entry version exactly once (state from Kafka)."""

    def __init__(
        self,
        feeds: Sequence[FeedSpec],
        settings: FeedSettings,
        fetcher: FeedFetcher,
        publisher: FeedPublisher,
        state: FeedState,
        metrics: FeedMetrics,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.feeds = list(feeds)
        self._settings, self._fetcher, self._publisher = settings, fetcher, publisher
        self._state, self._metrics, self._clock = state, metrics, clock
        self._schedule = {feed.key: _Schedule() for feed in self.feeds}
        self._limit = asyncio.Semaphore(settings.concurrency)

    async def poll_once(self, *, force: bool = False) -> list[PollResult]:
        """Poll every feed that is due (every feed if ``force``), concurrently."""
        now = self._clock()
        due = [f for f in self.feeds if force or self._schedule[f.key].next_due <= now]
        return list(await asyncio.gather(*(self._bounded(feed) for feed in due)))

    def seconds_until_due(self) -> float:
        """How long until the next feed is due."""
        if not self.feeds:
            return self._settings.interval_s
        soonest = min(s.next_due for s in self._schedule.values())
        return max(_MIN_SLEEP_S, soonest - self._clock())

    async def run(self, stop: asyncio.Event) -> None:
        """Poll feeds as they come due until ``stop`` is set."""
        while not stop.is_set():
            await self.poll_once()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=self.seconds_until_due())

    async def _bounded(self, feed: FeedSpec) -> PollResult:
        async with self._limit:
            return await self.poll_feed(feed)

    async def poll_feed(self, feed: FeedSpec) -> PollResult:
        """Fetch, parse and publish one feed; every failure is logged, counted and returned."""
        schedule = self._schedule[feed.key]
        try:
            result = await self._poll(feed, schedule)
        except FeedFetchError as exc:
            return self._failed(feed, schedule, exc.kind, str(exc), exc.retry_after_s)
        except FeedParseError as exc:
            return self._failed(feed, schedule, ErrorKind.NOT_A_FEED, str(exc), None)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a broker hiccup must not stop the other feeds
            reason = f"feed {feed.url}: publish failed: {type(exc).__name__}: {exc}"
            return self._failed(feed, schedule, ErrorKind.PUBLISH, reason, None)
        schedule.failures = 0
        schedule.next_due = self._clock() + feed.interval(self._settings.interval_s)
        self._metrics.polls.labels(feed.label, result.outcome).inc()
        return result

    async def _poll(self, feed: FeedSpec, schedule: _Schedule) -> PollResult:
        fetched = await self._fetcher.fetch(feed, schedule.validators)
        if fetched.body is None:
            return PollResult(feed, "not_modified")
        parsed = parse_feed(fetched.body, str(feed.url), fetched.fetched_at, fetched.content_type)
        for reason in parsed.warnings:
            log.info("feed %s: %s", feed.label, reason)
        for reason in parsed.skipped:
            log.warning("feed %s: skipped %s", feed.label, reason)
            self._metrics.errors.labels(feed.label, ErrorKind.BAD_ENTRY.value).inc()
        publications = self._changes(feed, parsed.entries)
        await self._publisher.publish(publications)
        self._remember(feed, publications)
        # Only now: a failed publish must refetch the whole body next time, not get a 304.
        schedule.validators = fetched.validators
        self._track_lag(feed, schedule, parsed.entries)
        docs = [p.document for p in publications]
        return PollResult(feed, "ok", published=docs, skipped=parsed.skipped)

    def _changes(self, feed: FeedSpec, entries: Sequence[FeedEntry]) -> list[Publication]:
        """Publications for the entries that are new or whose content changed, oldest first."""
        out: dict[str, Publication] = {}
        now = datetime.now(UTC)
        for entry in sorted(entries, key=lambda e: e.timestamp):
            known = self._state.get((feed.namespace, entry.entry_id))
            digest = entry.content_hash
            if entry.entry_id in out or (known is not None and known.content_hash == digest):
                continue
            version = 1 if known is None else known.version + 1
            doc = entry.to_document(feed.namespace, version)
            state = FeedEntryState(
                namespace=feed.namespace,
                entry_id=entry.entry_id,
                feed_url=str(feed.url),
                content_hash=digest,
                version=version,
                document_id=doc.id,
                published_at=now,
            )
            out[entry.entry_id] = Publication(doc, state)
        return list(out.values())

    def _remember(self, feed: FeedSpec, publications: Sequence[Publication]) -> None:
        for item in publications:
            self._state[(item.state.namespace, item.state.entry_id)] = item.state
            change = "new" if item.state.version == 1 else "updated"
            self._metrics.entries.labels(feed.label, change).inc()
            log.info("feed %s: published %s (%s)", feed.label, item.document.id, change)

    def _track_lag(self, feed: FeedSpec, schedule: _Schedule, entries: Sequence[FeedEntry]) -> None:
        if not entries:
            return
        newest = max(entry.timestamp for entry in entries).timestamp()
        if schedule.newest is None:
            # Live value: the gauge reads now minus the newest entry time on every scrape.
            self._metrics.lag.labels(feed.label).set_function(
                lambda: time.time() - (schedule.newest or time.time())
            )
        schedule.newest = max(newest, schedule.newest or newest)

    def _failed(
        self,
        feed: FeedSpec,
        schedule: _Schedule,
        kind: ErrorKind,
        reason: str,
        retry_after: float | None,
    ) -> PollResult:
        schedule.failures += 1
        cfg = self._settings
        delay = backoff_delay(schedule.failures, cfg.backoff_base_s, cfg.backoff_max_s, retry_after)
        if kind is ErrorKind.RATE_LIMITED:  # asked to slow down: never sooner than usual
            delay = max(delay, feed.interval(cfg.interval_s))
        schedule.next_due = self._clock() + delay
        self._metrics.polls.labels(feed.label, "error").inc()
        self._metrics.errors.labels(feed.label, kind.value).inc()
        log.warning("%s (failure %d, next try in %.0fs)", reason, schedule.failures, delay)
        return PollResult(feed, "error", error=reason)


@contextlib.asynccontextmanager
async def open_poller(
    settings: Settings, metrics: FeedMetrics, feeds: Sequence[FeedSpec] | None = None
) -> AsyncIterator[FeedPoller]:
    """A started poller: topics exist, its producer fenced any predecessor, state is read."""
    feeds = load_feeds(settings.feeds) if feeds is None else feeds
    await ensure_topics(settings.kafka, settings.worker)
    publisher = FeedPublisher(settings.kafka, settings.feeds.client_id)
    await publisher.start()  # fences a predecessor first: state read after this is final
    fetcher = FeedFetcher(settings.feeds)
    try:
        state = await read_feed_state(settings.kafka)
        log.info("feeds: %d feed(s), %d published entries known", len(feeds), len(state))
        yield FeedPoller(feeds, settings.feeds, fetcher, publisher, state, metrics)
    finally:
        await fetcher.close()
        await publisher.stop()


async def run_feeds(settings: Settings, metrics: FeedMetrics, stop: asyncio.Event) -> None:
    """The long-running mode: follow the configured feeds until ``stop`` is set."""
    async with open_poller(settings, metrics) as poller:
        await poller.run(stop)
