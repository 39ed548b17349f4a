"""`factstream worker`: the faust worker: the editor agent on factstream.documents and the
query agent on factstream.questions."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, cast

import faust
from aiokafka.errors import ProducerFenced
from prometheus_client import start_http_server

from factstream.agents.editor import Editor, InputRecord, Outcome
from factstream.agents.gauges import GaugeBook, PartitionGauges
from factstream.agents.lifecycle import track_tenants
from factstream.agents.query import register_query_agent
from factstream.agents.replicas import track_replicas
from factstream.agents.series import NamespaceSeries
from factstream.agents.stopping import Actors, StoppingWorker
from factstream.agents.window import Window
from factstream.clients import Clients, open_clients
from factstream.config import Settings
from factstream.errors import FactstreamError
from factstream.store.base import FactStore
from factstream.streams.admin import ensure_topics
from factstream.streams.app import create_app, documents_topic
from factstream.streams.changelog import ChangelogPublisher
from factstream.streams.placement import Placement
from factstream.streams.recovery import RecoveredBatches
from factstream.topics.definitions import TopicName, topic_name
from factstream.topics.records import InputRef

__all__ = [
    "EXIT_FENCED",
    "WARM_TEXT",
    "Runtime",
    "build_worker_app",
    "highwater",
    "partition_transactional_id",
    "release_partition_topic",
    "run_worker",
]

log = logging.getLogger(__name__)

# Seconds between refreshes of the lag gauge from the broker's end offsets.
_LAG_REFRESH_S = 15.0
# How often the actor faust starts before the first assignment looks for its partition.
_ASSIGNMENT_POLL_S = 0.05
# Embedded once at start, so that loading the model does not land on the first document.
WARM_TEXT = "The embedding model is loaded before the first document."
# The exit status of a worker fenced by its partition's new owner (sysexits' EX_TEMPFAIL).
EXIT_FENCED = 75


class Runtime:
    """The worker's clients, built once on first use inside the worker's event loop."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = asyncio.Lock()
        self._open = AsyncExitStack()  # the clients, closed by close()
        self._clients: Clients | None = None
        self.series: NamespaceSeries | None = None  # built with the clients
        self._metrics_server: Any = None
        self._gauges: PartitionGauges | None = None
        # assignment, revocation and the facts counts behind the gauges (agents/gauges.py)
        self.book = GaugeBook(settings.kafka, self._built_gauges)
        self._stopping: set[asyncio.Future[None]] = set()  # publishers stopping (see editor)
        self.actors = Actors()  # the editor actors, ended at once by a stop signal

    async def _build(self) -> Clients:
        async with self._lock:
            if self._clients is None:
                self._clients = await self._open.enter_async_context(open_clients(self.settings))
                worker, metrics = self.settings.worker, self._clients.metrics.worker
                self.series = NamespaceSeries(
                    metrics, worker.metrics_namespace_list, worker.metrics_busiest
                )
                self._gauges = PartitionGauges(
                    metrics,
                    topic_name(TopicName.DOCUMENTS, self.settings.kafka.topic_prefix),
                    Placement.load(self.settings.kafka.placement_file),
                    self.series,
                )
                self.book.attach(self._gauges)
                self._serve_metrics(self._clients)
            return self._clients

    @asynccontextmanager
    async def editor(self, partition: int) -> AsyncIterator[Editor]:
        """The editor of one documents partition, publishing with that partition's
        transactional id (``partition_transactional_id``).

        Starting its publisher fences the partition's previous owner: a worker that was
        paused past its session timeout (a zombie) can no longer publish a batch; its open
        transaction, if any, is aborted at once rather than at the broker's timeout.
        """
        worker = self.settings.worker
        clients = await self._build()
        # Made only now and stopped whatever happens from here: an actor revoked while the
        # clients are built or the publisher starts is cancelled there, and a producer never
        # stopped keeps its connections (aiokafka's "Unclosed AIOKafkaProducer").
        publisher = ChangelogPublisher(
            self.settings.kafka,
            worker.app_id,
            transactional_id=partition_transactional_id(worker.app_id, partition),
        )
        try:
            await publisher.start()
            yield Editor(clients, publisher, self.settings.editor, worker, self.series)
        finally:
            await self._stop_publisher(publisher)

    async def _stop_publisher(self, publisher: ChangelogPublisher) -> None:
        """Stop it to the end even if the actor is cancelled again meanwhile (a revocation
        while it stops): the stop goes on as a task of its own."""
        stopping = asyncio.ensure_future(publisher.stop())
        self._stopping.add(stopping)
        stopping.add_done_callback(self._stopping.discard)
        await asyncio.shield(stopping)

    async def gauges(self) -> PartitionGauges:
        """Lag and facts gauges of the partitions this worker owns (built on first use)."""
        await self._build()
        assert self._gauges is not None  # noqa: S101 - _build() made them
        return self._gauges

    async def _built_gauges(self) -> tuple[PartitionGauges, FactStore]:
        return await self.gauges(), (await self._build()).store

    async def clients(self) -> Clients:
        """The clients the editor uses (built on first use)."""
        return await self._build()

    async def warm(self) -> float | None:
        """Build the clients and embed one text, at the worker's start: the model's load
        (seconds on the CPU) is then not the first document's wait. Returns the seconds it
        took, or None when it failed (logged; the first document builds and fails alike)."""
        start = time.perf_counter()
        try:
            clients = await self._build()
            await clients.embedder.embed(WARM_TEXT)
        except (FactstreamError, OSError) as exc:
            log.warning("could not warm the embedding model at start: %s", exc)
            return None
        seconds = time.perf_counter() - start
        log.info("clients built and embedding model warm in %.1f s", seconds)
        return seconds

    def _serve_metrics(self, clients: Clients) -> None:
        worker = self.settings.worker
        if not worker.metrics_port:
            return
        try:
            self._metrics_server, _ = start_http_server(
                worker.metrics_port, addr=worker.metrics_host, registry=clients.metrics.registry
            )
        except OSError as exc:  # a taken port must not stop the editing
            log.error(
                "no /metrics: port %d: %s (FACTSTREAM_WORKER_METRICS_PORT)",
                worker.metrics_port,
                exc,
            )
            return
        log.info("metrics on http://%s:%d/metrics", worker.metrics_host, worker.metrics_port)

    async def close(self) -> None:
        self.actors.stop()  # none edits while its clients close (normally done at the signal)
        await self.actors.wait(self.settings.worker.stop_timeout_s)
        self.book.cancel()
        if self._stopping:
            await asyncio.gather(*self._stopping, return_exceptions=True)
        if self._metrics_server is not None:
            self._metrics_server.shutdown()
        await self._open.aclose()


def build_worker_app(settings: Settings) -> tuple[faust.App, Runtime]:
    """The faust app with the editor agent: one actor per documents partition, in order."""
    app = create_app(settings.kafka, settings.worker)
    runtime = Runtime(settings)
    app.hold_commits = runtime.actors.hold  # at a revocation (streams/app.py)

    @app.agent(documents_topic(app, settings.kafka), name="editor", isolated_partitions=True)
    async def edit(stream: faust.StreamT[bytes]) -> None:
        if not runtime.actors.enter():  # the worker is stopping: take nothing
            return
        try:
            # The actor faust starts before the first assignment learns its partition then.
            partition = await _partition(stream)
            async with runtime.editor(partition) as editor:
                await _edit_partition(app, runtime, settings, stream, editor, partition)
        except asyncio.CancelledError:
            # faust stops a revoked partition's actor by cancelling it: the end of this
            # actor, not a crash. Raised on, faust's supervisor would restart the actor with
            # the revoked partition, and the next assignment would fail on it. Nothing was
            # committed for the document in flight: its new owner reads it again.
            log.info("editor actor stopped (partition revoked or worker stopping)")
        finally:
            runtime.actors.leave()
            # Not while the worker stops: faust's conductor would subscribe again without
            # the topic, a rebalance the stop would wait for (issue 25's fourth group run:
            # 22-27 s stops); no assignment follows a stop anyway.
            if not runtime.actors.stopping:
                release_partition_topic(stream)

    @app.task  # type: ignore[untyped-decorator]  # faust is untyped
    async def _warm() -> None:
        await runtime.warm()

    register_query_agent(app, settings, runtime.clients)
    _track_partitions(app, runtime, settings)
    track_replicas(app, settings, runtime.clients, runtime.gauges)
    track_tenants(app, settings, runtime.clients, runtime.gauges)

    @app.on_before_shutdown.connect
    async def _close(sender: Any, /, *args: Any, signal: Any, **kwargs: Any) -> None:
        await runtime.close()

    return app, runtime


def release_partition_topic(stream: faust.StreamT[bytes]) -> None:
    """Unregister an ended actor's one-partition topic from faust's conductor.

    faust does it only when the actor's iteration of the stream ends
    (Topic.on_stop_iteration). An actor revoked while it waits elsewhere (an LM call, a
    publish) is cancelled there: its iteration never ends, the topic stays registered with
    the revoked partition, and the next assignment without that partition fails faust's
    ``assert topic.active_partitions.issubset(assigned)`` (Conductor._update_tp_index): the
    app crashes and the worker exits with status 1 (issue 25's group test). Doing it twice
    is harmless (a set's discard).
    """
    channel: Any = stream.channel
    if getattr(channel, "active_partitions", None) is not None:
        channel.on_stop_iteration()


def highwater(consumer: Any, tp: Any) -> int | None:
    """The partition's high watermark for the lag gauge; None once it is no longer assigned.

    A document committed while a rebalance hands its partition to another worker (between
    aiokafka's new assignment and faust's cancelling the actor) is legitimate: its offset
    is simply not committed here. aiokafka asserts that the partition is assigned, and the
    error ended the worker (status 70; issue 25's fifth full-size group run).
    """
    try:
        return cast("int | None", consumer.highwater(tp))
    except AssertionError:  # aiokafka: "Partition is not assigned"
        return None


def partition_transactional_id(app_id: str, partition: int) -> str:
    """The transactional id of the publisher of one documents partition's batches."""
    return f"{app_id}-documents-{partition}"


async def _edit_partition(
    app: faust.App,
    runtime: Runtime,
    settings: Settings,
    stream: faust.StreamT[bytes],
    editor: Editor,
    partition: int,
) -> None:
    """One actor's loop: the partition's documents through the window, in order."""
    recovered = RecoveredBatches(settings.kafka)  # per actor, so per partition
    # Acks are ours: an event is acked once its document is committed, in input order,
    # so the offset committed never passes a document still in flight.
    events = cast("faust.Stream[bytes]", stream).noack()

    async def committed(event: Any, record: InputRecord, outcome: Outcome) -> None:
        msg = event.message
        log.info("outcome %s[%d]@%d %s", msg.topic, msg.partition, msg.offset, outcome.value)
        await events.ack(event)
        await runtime.book.processed(record, outcome, highwater(app.consumer, msg.tp))

    policy = settings.editor.dependencies
    window: Window[Any] = Window(
        editor,
        recovered,
        settings.editor.window,
        partition,
        lookahead=settings.editor.lookahead,
        ahead=settings.embed.batch_size,
        dependencies=None if policy == "off" else policy,
    )
    await runtime.actors.enrol(partition, window)  # a rebalance holds its commits
    try:
        await window.run(events.events(), _record, committed)
    except ProducerFenced:
        # A zombie: paused past its session timeout, its partition went to another
        # worker whose publisher fenced this one. Leave without committing anything.
        log.critical("fenced on partition %d: another worker owns it; exiting", partition)
        os._exit(EXIT_FENCED)
    except Exception:
        # Exit without committing: the records in flight are read again when the
        # worker restarts (their batches, if published, are found on the changelog).
        log.critical("unrecoverable error; exiting without committing", exc_info=True)
        os._exit(70)
    finally:
        runtime.actors.leave_partition(partition, window)


def _record(event: Any) -> InputRecord:
    msg = event.message
    return InputRecord(
        key=msg.key,
        value=msg.value,
        source=InputRef(topic=msg.topic, partition=msg.partition, offset=msg.offset),
        appended_ms=int((msg.timestamp or 0) * 1000),
    )


async def _partition(stream: faust.StreamT[bytes]) -> int:
    """The input partition of an isolated-partitions actor's stream.

    faust starts one actor before the first assignment and gives it its partition then
    (the set it reads fills in): that one waits here until it has it.
    """
    while len(tps := list(stream.active_partitions or ())) != 1:
        await asyncio.sleep(_ASSIGNMENT_POLL_S)
    return int(tps[0].partition)


def _track_partitions(app: faust.App, runtime: Runtime, settings: Settings) -> None:
    """Keep the per-partition gauges to the documents partitions this worker owns."""
    topic = topic_name(TopicName.DOCUMENTS, settings.kafka.topic_prefix)

    def ours(tps: Any) -> set[int]:
        return {tp.partition for tp in tps if tp.topic == topic}

    @app.on_partitions_assigned.connect
    async def _assigned(sender: Any, /, *args: Any, signal: Any, **kwargs: Any) -> None:
        parts = ours(args[0] if args else kwargs.get("assigned", ()))
        runtime.actors.resume(parts)  # held at the revocation; faust ended the revoked
        if parts:
            runtime.book.assign(parts)

    @app.on_partitions_revoked.connect
    async def _revoked(sender: Any, /, *args: Any, signal: Any, **kwargs: Any) -> None:
        if parts := ours(args[0] if args else kwargs.get("revoked", ())):
            runtime.book.revoke(parts)

    @app.timer(interval=_LAG_REFRESH_S)  # type: ignore[untyped-decorator]  # faust is untyped
    async def _refresh_lag() -> None:
        tps = [tp for tp in app.consumer.assignment() if tp.topic == topic]
        if not tps:
            return
        try:
            highwaters = await app.consumer.highwaters(*tps)
        except Exception as exc:  # noqa: BLE001 - the next tick tries again
            log.warning("lag not refreshed: %r", exc)
            return
        (await runtime.gauges()).refresh_lag({tp.partition: hw for tp, hw in highwaters.items()})


def run_worker(settings: Settings, loglevel: str = "info") -> None:
    """Create the topics, then run the worker until it is stopped (SIGTERM, Ctrl-C)."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    created = loop.run_until_complete(ensure_topics(settings.kafka, settings.worker))
    if created:
        log.info("created topics: %s", ", ".join(created))
    app, runtime = build_worker_app(settings)
    StoppingWorker(
        app, runtime.actors, settings.worker.stop_timeout_s, loglevel=loglevel, loop=loop
    ).execute_from_commandline()
