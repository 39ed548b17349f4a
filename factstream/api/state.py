"""What the routes share: clients, the query engine, the key table, the publisher, metrics."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request

from factstream.access import KeyTable
from factstream.api.metrics import ApiMetrics
from factstream.ask.query import QueryEngine
from factstream.clients import Clients
from factstream.config import ApiSettings, KafkaSettings, LMSettings
from factstream.streams.changelog import ChangelogPublisher
from factstream.topics.records import Document

__all__ = ["ApiState", "State"]


@dataclass
class ApiState:
    """Built once by the app's lifespan, with the settings sections the routes read."""

    clients: Clients
    engine: QueryEngine
    keys: KeyTable
    metrics: ApiMetrics
    api: ApiSettings
    kafka: KafkaSettings
    lm: LMSettings
    _publisher: ChangelogPublisher | None = None
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def publish(self, documents: list[Document]) -> None:
        """Publish on factstream.documents (the producer starts on first use)."""
        async with self._lock:
            if self._publisher is None:
                publisher = ChangelogPublisher(self.kafka, "factstream-api")
                await publisher.start()
                self._publisher = publisher
        await self._publisher.publish_documents(documents)

    async def aclose(self) -> None:
        if self._publisher is not None:
            await self._publisher.stop()


def _state(request: Request) -> ApiState:
    state: ApiState = request.app.state.api
    return state


State = Annotated[ApiState, Depends(_state)]
