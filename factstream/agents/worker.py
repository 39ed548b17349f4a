"""`factstream worker`: the faust worker: the editor agent on factstream.documents and the
query agent on factstream.questions."""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

import faust
from prometheus_client import start_http_server

from factstream.agents.editor import Editor, InputRecord
from factstream.agents.query import register_query_agent
from factstream.clients import Clients, build_clients
from factstream.config import Settings
from factstream.streams.admin import ensure_topics
from factstream.streams.app import create_app, documents_topic
from factstream.streams.changelog import ChangelogPublisher
from factstream.streams.recovery import RecoveredBatches
from factstream.topics.records import InputRef

__all__ = ["Runtime", "build_worker_app", "run_worker"]

log = logging.getLogger(__name__)


class Runtime:
    """The worker's clients, built once on first use inside the worker's event loop."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._lock = asyncio.Lock()
        self._clients: Clients | None = None
        self._publisher: ChangelogPublisher | None = None
        self._editor: Editor | None = None
        self._metrics_server: Any = None

    async def editor(self) -> Editor:
        async with self._lock:
            if self._editor is None:
                self._clients = await build_clients(self.settings)
                self._publisher = ChangelogPublisher(
                    self.settings.kafka, self.settings.worker.app_id
                )
                await self._publisher.start()
                self._editor = Editor(self._clients, self._publisher)
                self._serve_metrics(self._clients)
            return self._editor

    async def clients(self) -> Clients:
        """The clients the editor uses (built on first use)."""
        await self.editor()
        assert self._clients is not None  # noqa: S101 - editor() built them
        return self._clients

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
        if self._metrics_server is not None:
            self._metrics_server.shutdown()
        if self._publisher is not None:
            await self._publisher.stop()
        if self._clients is not None:
            await self._clients.aclose()


def build_worker_app(settings: Settings) -> tuple[faust.App, Runtime]:
    """The faust app with the editor agent: one actor per documents partition, in order."""
    app = create_app(settings.kafka, settings.worker)
    runtime = Runtime(settings)

    @app.agent(documents_topic(app, settings.kafka), name="editor", isolated_partitions=True)
    async def edit(stream: faust.StreamT[bytes]) -> None:
        editor = await runtime.editor()
        recovered = RecoveredBatches(settings.kafka)  # per actor, so per partition
        async for event in stream.events():
            msg = event.message
            record = InputRecord(
                key=msg.key,
                value=msg.value,
                source=InputRef(topic=msg.topic, partition=msg.partition, offset=msg.offset),
                appended_ms=int((msg.timestamp or 0) * 1000),
            )
            try:
                outcome = await editor.handle(record, recovered)
            except Exception:
                # Faust would ack this event as the actor dies and commit past it. Exit
                # without committing: the record is read again when the worker restarts.
                log.critical("unrecoverable error; exiting without committing", exc_info=True)
                os._exit(70)
            log.info("outcome %s[%d]@%d %s", msg.topic, msg.partition, msg.offset, outcome.value)
            _record_lag(app, editor, msg.tp, msg.offset)

    register_query_agent(app, settings, runtime.clients)

    @app.on_before_shutdown.connect
    async def _close(sender: Any, /, *args: Any, signal: Any, **kwargs: Any) -> None:
        await runtime.close()

    return app, runtime


def _record_lag(app: faust.App, editor: Editor, tp: Any, offset: int) -> None:
    highwater = app.consumer.highwater(tp)
    if highwater is not None:
        lag = editor.metrics.lag.labels(topic=tp.topic, partition=str(tp.partition))
        lag.set(max(0, highwater - offset - 1))


def run_worker(settings: Settings, loglevel: str = "info") -> None:
    """Create the topics, then run the worker until it is stopped (SIGTERM, Ctrl-C)."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    created = loop.run_until_complete(ensure_topics(settings.kafka, settings.worker))
    if created:
        log.info("created topics: %s", ", ".join(created))
    app, _ = build_worker_app(settings)
    faust.Worker(app, loglevel=loglevel, loop=loop).execute_from_commandline()
