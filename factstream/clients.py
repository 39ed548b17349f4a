"""Build the real clients once from settings (fact store, embedder, LM, task runner); close them."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import CollectorRegistry

from factstream.config import Settings
from factstream.embed.base import Embedder
from factstream.embed.st_embedder import SentenceTransformerEmbedder
from factstream.lm.base import LMClient
from factstream.lm.factory import build_lm, build_task_runner
from factstream.metrics import Metrics
from factstream.store.base import FactStore
from factstream.store.weaviate_store import WeaviateFactStore
from factstream.tasks.runner import TaskRunner

__all__ = ["Clients", "build_clients"]


@dataclass(frozen=True)
class Clients:
    """Everything that talks to a service, built together and injected as one."""

    settings: Settings
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


async def build_clients(settings: Settings, registry: CollectorRegistry | None = None) -> Clients:
    """Connect to Weaviate, load the embedding model and set up the LM client."""
    metrics = Metrics.create(registry)
    store = await WeaviateFactStore.open(settings.weaviate, settings.store)
    try:
        embedder = await SentenceTransformerEmbedder.load(settings.embed, metrics.embed)
    except BaseException:
        await store.close()
        raise
    lm = build_lm(settings.lm, settings.local.cache_dir, metrics.lm)
    runner = build_task_runner(settings.lm, lm, metrics.lm)
    return Clients(settings, metrics, store, embedder, lm, runner)
