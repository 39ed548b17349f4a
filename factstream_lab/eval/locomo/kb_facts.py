"""The extracted-facts knowledge base: the conversation streamed through the real worker.

The conversation's documents (``chunks.conversation_documents``) are written to a JSON
Lines file and published with ``publish_file``, what ``factstream publish FILE`` runs, to
a worker process (``factstream worker``) on topics of the run's own (a prefix), one
namespace per conversation. The run waits until every document is edited in (or settled:
dead-lettered, held for review) and then asks.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import orjson

from factstream.clients import Clients
from factstream.config import Settings
from factstream.ops.publish import publish_file
from factstream.ops.waiting import wait_applied
from factstream.streams.admin import ensure_topics
from factstream.topics.records import Document
from factstream_lab.eval.skipped import skipped_documents
from factstream_lab.stack.process import free_port
from factstream_lab.up import Part, start_part, stop_parts

__all__ = ["FactsWorker", "worker_env", "write_documents"]


def worker_env(tag: str, metrics_port: int, lm_url: str | None) -> dict[str, str]:
    """The run's own topics, app id and metrics port (the worker and this process share it)."""
    env = {
        "FACTSTREAM_KAFKA_TOPIC_PREFIX": f"{tag}.",
        "FACTSTREAM_WORKER_APP_ID": tag,
        "FACTSTREAM_WORKER_PARTITIONS": "1",
        "FACTSTREAM_WORKER_METRICS_PORT": str(metrics_port),
        "FACTSTREAM_WORKER_METRICS_HOST": "127.0.0.1",
    }
    if lm_url:
        env["FACTSTREAM_LM_URL"] = lm_url
    return env


def write_documents(path: Path, documents: list[Document]) -> Path:
    """The documents as JSON Lines, as a user would publish them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = (orjson.dumps(d.model_dump(mode="json", exclude_none=True)) for d in documents)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@dataclass
class FactsWorker:
    """A worker process on the run's topics, and how to feed it."""

    settings: Settings
    part: Part
    metrics_port: int

    async def publish_and_wait(
        self,
        clients: Clients,
        path: Path,
        namespace: str,
        ids: list[str],
        tick: Callable[[int], None],
        timeout_s: float,
    ) -> list[str]:
        """Publish the file; return once its documents are edited in. Returns the ids the
        worker settled without applying (dead-lettered or held for review)."""
        report = await publish_file(path, self.settings.kafka, self.settings.worker)
        if report.rejected:
            raise ValueError(f"{path}: documents rejected: {report.rejected[:3]}")
        await wait_applied(
            clients.store,
            namespace,
            ids,
            tick,
            timeout_s,
            alive=self.part.alive,
            settled=lambda: skipped_documents(self.settings.kafka),
        )
        skipped = await skipped_documents(self.settings.kafka)
        return [i for i in ids if i in skipped]


@contextmanager
def running_worker(tag: str, lm_url: str | None, log: Path) -> Iterator[FactsWorker]:
    """A worker on the run's own topics for the length of the block."""
    port = free_port()
    env = worker_env(tag, port, lm_url)
    settings = Settings.from_env(env)
    part = Part("worker", [sys.executable, "-m", "factstream", "worker"], log, "", env=env)
    try:
        yield FactsWorker(settings, part, port)
    finally:
        stop_parts([part], grace_s=60)


async def start(worker: FactsWorker) -> None:
    """Create the run's topics, then start the worker on them."""
    await ensure_topics(worker.settings.kafka, worker.settings.worker)
    start_part(worker.part)
