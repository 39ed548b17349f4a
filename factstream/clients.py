"""The real clients (fact store, embedder, LM, task runner), opened together from settings and
closed together: ``async with open_clients(settings) as clients``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from prometheus_client import CollectorRegistry

from factstream.config import Settings
from factstream.embed.base import Embedder
from factstream.embed.cache import CachedEmbedder
from factstream.embed.factory import load_embedder
from factstream.lm.base import LMClient
from factstream.lm.factory import build_lm
from factstream.lm.tasks.runner import TaskRunner, build_task_runner
from factstream.metrics import Metrics
from factstream.store.base import FactStore
from factstream.store.weaviate_store import WeaviateFactStore

__all__ = ["Clients", "open_clients"]


@dataclass(frozen=True)
class Clients:
    """Everything that talks to a service, built together and injected as one.

    It carries no settings: a component that needs a section is given it beside the clients.
    """

    metrics: Metrics
    store: FactStore
    embedder: Embedder
    lm: LMClient
    runner: TaskRunner

    async def aclose(self) -> None:
        """Close every client (in reverse order of need)."""
        await self.lm.aclose()
        await self.embedder.aclose()
        await self.store.close()


async def _build_clients(settings: Settings, registry: CollectorRegistry | None) -> Clients:
    """Connect to Weaviate, load the embedding model and set up the LM client."""
    metrics = Metrics.create(registry)
    store = await WeaviateFactStore.open(settings.weaviate, settings.store)
    try:
        loaded = await load_embedder(settings.embed, settings.local.cache_dir, metrics.embed)
        embedder = CachedEmbedder(
            loaded, questions=settings.embed.question_cache, texts=settings.embed.text_cache
        )
    except BaseException:
        await store.close()
        raise
    lm = build_lm(settings.lm, settings.local.cache_dir, metrics.lm)
    runner = build_task_runner(settings.lm, lm, metrics.lm)
    return Clients(metrics, store, embedder, lm, runner)


@asynccontextmanager
async def open_clients(
    settings: Settings, registry: CollectorRegistry | None = None
) -> AsyncIterator[Clients]:
    """The real clients for the length of the block, closed when it ends, however it ends.

    Args:
        settings: The whole tree: each client is built from its own section.
        registry: Where the metrics register (default: a fresh registry).
    """
    clients = await _build_clients(settings, registry)
    try:
        yield clients
    finally:
        await clients.aclose()
