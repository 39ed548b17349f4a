"""Readiness: Kafka, Weaviate and the LM server each answer within a few seconds."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

import httpx
from aiokafka.admin import AIOKafkaAdminClient

from factstream.clients import Clients
from factstream.config import KafkaSettings, LMSettings

__all__ = ["CHECK_TIMEOUT_S", "readiness"]

CHECK_TIMEOUT_S = 5.0


async def _kafka(bootstrap: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=4000)
    await admin.start()
    try:
        await admin.list_topics()
    finally:
        await admin.close()


async def _lm(url: str) -> None:
    async with httpx.AsyncClient(timeout=CHECK_TIMEOUT_S) as client:
        response = await client.get(f"{url.rstrip('/')}/models")
        response.raise_for_status()


async def _check(probe: Awaitable[object]) -> str:
    try:
        await asyncio.wait_for(probe, CHECK_TIMEOUT_S)
    except TimeoutError:
        return f"no answer within {CHECK_TIMEOUT_S:.0f}s"
    except Exception as exc:  # noqa: BLE001 - any failure means not ready; report it
        return f"{type(exc).__name__}: {exc}"[:300]
    return "ok"


async def readiness(clients: Clients, kafka: KafkaSettings, lm: LMSettings) -> dict[str, str]:
    """``{"kafka": "ok", "weaviate": "ok", "lm": "..."}``: each check's outcome."""
    kafka_ok, weaviate_ok, lm_ok = await asyncio.gather(
        _check(_kafka(kafka.bootstrap_servers)),
        _check(clients.store.namespaces()),
        _check(_lm(lm.url)),
    )
    return {"kafka": kafka_ok, "weaviate": weaviate_ok, "lm": lm_ok}
