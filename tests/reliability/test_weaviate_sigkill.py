"""A Weaviate SIGKILLed right after the store's writes keeps every vector (issue 25).

Weaviate v1.38.14 flushes a shard's HNSW commit log at the end of a batch but before the
batch's vectors are added, so the last batch written to each tenant stayed in a buffer and
a SIGKILL lost it: the objects were listed, no vector search found them again, and neither
async replication nor read repair restored them (WeaviateFactStore._flush_vectors).
"""

from __future__ import annotations

import asyncio
import random

from fixtures.instances import InstanceFactory
from fixtures.vector_checks import unfound_by_vector
from unit.store.builders import make_fact, stored

from factstream.config import StoreSettings
from factstream.store.weaviate_store import WeaviateFactStore
from factstream_lab.stack.weaviate import WeaviateService

NAMESPACES = [f"kill-{i}" for i in range(4)]
PREFIX = "Sigkill"


async def test_every_fact_written_before_a_sigkill_is_found_by_vector_search(
    private_weaviate: InstanceFactory,
) -> None:
    server = await asyncio.to_thread(private_weaviate)
    service = server.service
    assert isinstance(service, WeaviateService)
    store = await WeaviateFactStore.open(
        service.weaviate, StoreSettings(collection_prefix=PREFIX, write_batch_size=4)
    )
    rng = random.Random(25)  # noqa: S311 - reproducible vectors
    try:
        for round_ in range(3):  # several upserts per tenant, the last one just before the kill
            for namespace in NAMESPACES:
                facts = [
                    stored(
                        make_fact(f"{namespace}-{round_}-{i}", f"fact {i}", namespace=namespace),
                        [rng.gauss(0, 1) for _ in range(16)],
                    )
                    for i in range(6)
                ]
                await store.upsert(namespace, facts)
    finally:
        await store.close()
    await asyncio.to_thread(server.stop, kill=True)
    await asyncio.to_thread(server.start)
    http, grpc = service.weaviate.http_port, service.weaviate.grpc_port
    unfound = await asyncio.to_thread(unfound_by_vector, http, grpc, f"{PREFIX}Fact", NAMESPACES)
    assert unfound == 0
