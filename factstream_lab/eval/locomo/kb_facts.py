"""The extracted-facts knowledge base: the conversation streamed through the real worker.

The conversation's documents (``chunks.conversation_documents``) are written to a JSON
Lines file and published with ``publish_file``, what ``factstream publish FILE`` runs, to
a worker process (``factstream worker``) on topics of the run's own (a prefix), one
namespace per conversation. The run waits until every document is edited in (or settled:
dead-lettered, held for review) and then asks.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import orjson

from factstream.clients import Clients
from factstream.config import Settings
from factstream.embed.base import Embedder
from factstream.ops.publish import publish_file
from factstream.ops.waiting import wait_applied
from factstream.streams.admin import ensure_topics
from factstream.topics.records import Document
from factstream_lab.eval.skipped import skipped_documents
from factstream_lab.stack.process import free_port
from factstream_lab.up import Part, start_part, stop_parts

__all__ = ["FactsWorker", "IngestRate", "worker_env", "write_documents"]


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


@dataclass
class IngestRate:
    """How fast the worker edited documents in, apart from its start, and against the
    embedding of the same documents alone.

    ``documents_per_second`` (the run's) counts from publishing, the worker's start (its
    model, its consumer group, its first tenant) included: 10 to 45 s of a 600-turn run on
    the shared machine. Here: the documents after the first one applied over the time since
    it was (``steady``), and the documents' texts embedded in one call by the same model
    (``embed_bound``), the bound the throughput benchmark sets its pipeline against; a
    conversation chunk of 8 turns is about four times as long as a news excerpt, so it
    costs the model several times as much.
    """

    first: float | None = None
    last: float | None = None
    after_first: int = 0
    embedded: int = 0
    embed_s: float = 0.0

    def ticker(self, tick: Callable[[int], None]) -> Callable[[int], None]:
        """``tick``, noting when documents were applied."""

        def noted(n: int) -> None:
            now = time.monotonic()
            if self.first is None:
                self.first, n_after = now, n - 1
            else:
                n_after = n
            self.after_first += n_after
            self.last = now
            tick(n)

        return noted

    async def bound(self, embedder: Embedder, texts: list[str]) -> None:
        """Embed ``texts`` in one call, timed (after the ingest: nothing else competes)."""
        started = time.monotonic()
        await embedder.embed_batch(texts)
        self.embed_s += time.monotonic() - started
        self.embedded += len(texts)

    def summary(self) -> dict[str, float | int | None]:
        steady_s = (self.last - self.first) if self.first is not None and self.last else 0.0
        steady = self.after_first / steady_s if steady_s > 0 else None
        bound = self.embedded / self.embed_s if self.embed_s > 0 else None
        return {
            "steady_documents": self.after_first,
            "steady_seconds": round(steady_s, 1),
            "steady_documents_per_second": None if steady is None else round(steady, 3),
            "embed_bound_documents_per_second": None if bound is None else round(bound, 3),
            "steady_over_embed_bound": (
                None if steady is None or bound is None else round(steady / bound, 3)
            ),
        }
