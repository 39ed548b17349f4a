"""Feed subscription on real Kafka: a local HTTP server whose feeds change between polls
(new entries, an edited entry, a malformed feed, a 304, a 503); the documents topic gets
exactly the expected Documents, and a restarted poller publishes nothing twice."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from fixtures.factories import UniqueName
from prometheus_client import CollectorRegistry

from factstream.config import FeedSettings, Settings, WorkerSettings
from factstream.feeds.config import FeedSpec
from factstream.feeds.poller import open_poller
from factstream.feeds.state import read_feed_state
from factstream.metrics import Metrics
from factstream.topics.definitions import TOPICS, TopicName, topic_name
from factstream.topics.records import Document

DATA = Path(__file__).resolve().parents[1] / "data" / "feeds"
RSS, ATOM = (DATA / "rss.xml").read_bytes(), (DATA / "atom.xml").read_bytes()
NEW_ITEM = b"""<item><title>Ferry timetable changes</title>
<link>https://news.example.org/ferry</link><guid>wire-1002</guid>
<pubDate>Wed, 06 Sep 2023 08:00:00 +0000</pubDate>
<description>The ferry runs every 20 minutes from Monday.</description></item>"""
FLAKY_RSS = b"""<?xml version="1.0"?><rss version="2.0"><channel><title>Flaky</title>
<item><title>Back online</title><link>https://flaky.example.org/1</link>
<pubDate>Thu, 07 Sep 2023 09:00:00 GMT</pubDate><description>It works again.</description>
</item></channel></rss>"""


@dataclass
class Served:
    status: int
    body: bytes = b""
    etag: str | None = None


@dataclass
class FeedServer:
    """Serves ``routes``; a request whose If-None-Match equals the route's ETag gets 304."""

    port: int
    routes: dict[str, Served] = field(default_factory=dict)
    requests: list[tuple[str, int]] = field(default_factory=list)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@pytest.fixture
def feed_server() -> Iterator[FeedServer]:
    server_state = FeedServer(port=0)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            served = server_state.routes.get(self.path, Served(404))
            status = served.status
            if served.etag and self.headers.get("If-None-Match") == served.etag:
                status = 304
            server_state.requests.append((self.path, status))
            self.send_response(status)
            if served.etag:
                self.send_header("ETag", served.etag)
            body = served.body if status == 200 else b""
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server_state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield server_state
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=10)


@pytest.fixture
async def feed_settings(
    kafka_settings: Settings, unique_name: UniqueName
) -> AsyncIterator[Settings]:
    kafka = kafka_settings.kafka.model_copy(update={"topic_prefix": unique_name("feeds") + "."})
    settings = kafka_settings.model_copy(
        update={
            "kafka": kafka,
            "worker": WorkerSettings(partitions=2),
            "feeds": FeedSettings(min_host_interval_s=0, timeout_s=30, backoff_base_s=1),
        }
    )
    yield settings
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers)
    await admin.start()
    try:
        await admin.delete_topics([topic_name(name, kafka.topic_prefix) for name in TOPICS])
    finally:
        await admin.close()


async def read_documents(settings: Settings) -> list[Document]:
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.kafka.bootstrap_servers,
        isolation_level="read_committed",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    await consumer.start()
    try:
        topic = topic_name(TopicName.DOCUMENTS, settings.kafka.topic_prefix)
        parts = [TopicPartition(topic, p) for p in range(settings.worker.partitions)]
        consumer.assign(parts)
        ends = await consumer.end_offsets(parts)
        docs: list[Document] = []
        while [tp for tp in parts if await consumer.position(tp) < ends[tp]]:
            for records in (await consumer.getmany(timeout_ms=1000)).values():
                docs += [Document.from_bytes(r.value) for r in records]
        return docs
    finally:
        await consumer.stop()


async def test_feeds_publish_each_entry_version_exactly_once_across_restarts(
    feed_server: FeedServer, feed_settings: Settings
) -> None:
    routes = feed_server.routes
    routes["/rss"] = Served(200, RSS)
    routes["/atom"] = Served(200, ATOM, etag='"atom-1"')
    routes["/bad"] = Served(200, b"<html><body>Please log in</body></html>")
    routes["/flaky"] = Served(503)
    feeds = [
        FeedSpec(url=feed_server.url("/rss"), namespace="desk", name="rss"),
        FeedSpec(url=feed_server.url("/atom"), namespace="science", name="atom"),
        FeedSpec(url=feed_server.url("/bad"), namespace="desk", name="bad"),
        FeedSpec(url=feed_server.url("/flaky"), namespace="desk", name="flaky"),
    ]
    metrics = Metrics.create(CollectorRegistry())
    published: list[list[str]] = []

    async with open_poller(feed_settings, metrics.feeds, feeds) as poller:
        # Round 1: 3 RSS entries (two without a usable date), 2 Atom; bad and flaky fail.
        results = await poller.poll_once(force=True)
        assert [r.outcome for r in results] == ["ok", "ok", "error", "error"]
        published.append([d.title or "" for r in results for d in r.published])

        # Round 2: an RSS entry edited and one added; Atom unchanged (304); flaky recovers.
        routes["/rss"] = Served(
            200,
            RSS.replace(b"on Tuesday", b"on Wednesday").replace(
                b"</channel>", NEW_ITEM + b"</channel>"
            ),
        )
        routes["/flaky"] = Served(200, FLAKY_RSS)
        results = await poller.poll_once(force=True)
        assert [r.outcome for r in results] == ["ok", "not_modified", "error", "ok"]
        published.append([d.title or "" for r in results for d in r.published])

        # Round 3: nothing changed.
        results = await poller.poll_once(force=True)
        published.append([d.title or "" for r in results for d in r.published])

    assert sorted(published[0]) == sorted(
        [
            "Council approves new bridge",
            "Mayor to visit the harbour",
            "Storm warning lifted",
            "Probe reaches Jupiter",
            "Telescope upgrade finished",
        ]
    )
    assert sorted(published[1]) == sorted(
        ["Council approves new bridge", "Ferry timetable changes", "Back online"]
    )
    assert published[2] == []
    assert ("/atom", 304) in feed_server.requests

    # A restart: a new poller, its state from Kafka only, no ETags: everything is fetched
    # in full and nothing is published again.
    async with open_poller(feed_settings, Metrics.create(CollectorRegistry()).feeds, feeds) as p:
        results = await p.poll_once(force=True)
        assert [r.outcome for r in results] == ["ok", "ok", "error", "ok"]
        assert [d for r in results for d in r.published] == []

    docs = await read_documents(feed_settings)
    assert len(docs) == 8 and len({(d.namespace, d.id) for d in docs}) == 8
    bridge = sorted(
        (d for d in docs if d.title == "Council approves new bridge"),
        key=lambda d: d.metadata["feed_version"],
    )
    assert [d.metadata["feed_version"] for d in bridge] == ["1", "2"]
    assert bridge[0].metadata["feed_entry_id"] == bridge[1].metadata["feed_entry_id"]
    assert "on Wednesday" in bridge[1].text and bridge[0].id != bridge[1].id
    undated = {d.title: d.metadata["timestamp_source"] for d in docs}
    assert undated["Mayor to visit the harbour"] == "fetched"
    assert undated["Storm warning lifted"] == "fetched"
    assert {d.namespace for d in docs if d.title == "Probe reaches Jupiter"} == {"science"}

    state = await read_feed_state(feed_settings.kafka)
    assert len(state) == 7
    assert sorted(s.version for s in state.values()) == [1, 1, 1, 1, 1, 1, 2]

    registry = metrics.registry
    errors = "factstream_feed_errors_total"
    assert registry.get_sample_value(errors, {"feed": "bad", "kind": "not_a_feed"}) == 3
    assert registry.get_sample_value(errors, {"feed": "flaky", "kind": "server_error"}) == 1
    entries = "factstream_feed_entries_published_total"
    assert registry.get_sample_value(entries, {"feed": "rss", "change": "updated"}) == 1
    lag = registry.get_sample_value("factstream_feed_lag_seconds", {"feed": "rss"})
    assert lag is not None and lag > 0
