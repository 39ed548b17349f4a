"""The worker warms its embedding model at start, before the first document."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from factstream.agents.worker import WARM_TEXT, Runtime
from factstream.clients import Clients
from factstream.config import Settings
from factstream.embed.base import Vector
from factstream.embed.fake import HashingEmbedder
from factstream.errors import EmbedError
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.metrics import Metrics
from factstream.store.memory import InMemoryFactStore


class Counting(HashingEmbedder):
    """Counts the texts it embeds; fails every call when ``broken``."""

    def __init__(self, broken: bool = False) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.broken = broken

    async def embed(self, text: str) -> Vector:
        if self.broken:
            raise EmbedError("the model did not load")
        self.texts.append(text)
        return await super().embed(text)

    async def embed_batch(self, texts: Sequence[str]) -> list[Vector]:
        return [await self.embed(t) for t in texts]


def _runtime(embedder: Counting) -> Runtime:
    lm = ScriptedLM([])
    runtime = Runtime(Settings())
    runtime._clients = Clients(Metrics.create(), InMemoryFactStore(), embedder, lm, TaskRunner(lm))
    return runtime


async def test_warming_embeds_one_text_with_the_clients_the_editor_gets() -> None:
    embedder = Counting()
    runtime = _runtime(embedder)
    seconds = await runtime.warm()
    assert seconds is not None and seconds >= 0
    assert embedder.texts == [WARM_TEXT]
    assert (await runtime.clients()).embedder is embedder


async def test_a_failed_warm_up_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    runtime = _runtime(Counting(broken=True))
    assert await runtime.warm() is None
    assert "could not warm the embedding model" in caplog.text
