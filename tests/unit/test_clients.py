"""open_clients: the clients for the length of a block, closed however it ends."""

from __future__ import annotations

import dataclasses

import pytest

import factstream.clients
from factstream.clients import Clients, open_clients
from factstream.config import Settings
from factstream.embed.fake import HashingEmbedder
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.metrics import Metrics
from factstream.store.memory import InMemoryFactStore


class ClosedStore(InMemoryFactStore):
    """Remembers that it was closed."""

    closed = False

    async def close(self) -> None:
        self.closed = True
        await super().close()


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> ClosedStore:
    """What open_clients builds: in-memory doubles, no services."""
    built = ClosedStore()

    async def build(settings: Settings, registry: object) -> Clients:
        lm = ScriptedLM()
        return Clients(Metrics.create(), built, HashingEmbedder(), lm, TaskRunner(lm))

    monkeypatch.setattr(factstream.clients, "_build_clients", build)
    return built


async def test_the_clients_close_when_the_block_ends(store: ClosedStore) -> None:
    async with open_clients(Settings()) as clients:
        assert clients.store is store and not store.closed
    assert store.closed


async def test_the_clients_close_when_the_block_fails(store: ClosedStore) -> None:
    with pytest.raises(RuntimeError, match="boom"):
        async with open_clients(Settings()):
            raise RuntimeError("boom")
    assert store.closed


def test_clients_carry_no_settings() -> None:
    assert "settings" not in {f.name for f in dataclasses.fields(Clients)}
