"""`factstream services check`: a round trip through each real service of the local stack.

It proves the plumbing: a document produced to Kafka
and read back, a fact written to Weaviate with our own vector and found again, and one LM
completion. Each step prints what it sent and what came back.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass

import orjson
import weaviate
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from openai import AsyncOpenAI
from weaviate.classes.config import Configure, DataType, Property
from weaviate.classes.query import MetadataQuery
from weaviate.classes.tenants import Tenant

from factstream.config import KafkaSettings, LMSettings, Settings, WeaviateSettings

__all__ = ["DEMO_DOCUMENT", "RoundTrip", "kafka_round_trip", "lm_round_trip", "weaviate_round_trip"]

DEMO_DOCUMENT: dict[str, object] = {
    "namespace": "demo",
    "kind": "article",
    "timestamp": "2023-09-01T00:00:00Z",
    "source": "factstream demo",
    "text": "Mike Lawler was sworn in as the United States representative for New York's "
    "17th congressional district.",
}


@dataclass(frozen=True)
class RoundTrip:
    """What one round trip sent, what came back, and how long it took."""

    service: str
    sent: str
    received: str
    seconds: float


async def kafka_round_trip(kafka: KafkaSettings) -> RoundTrip:
    """Create a fresh topic, produce the demo document keyed by namespace, consume it back."""
    started = time.perf_counter()
    topic = f"{kafka.topic_prefix}factstream.demo.{uuid.uuid4().hex[:8]}"
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)])
        value = orjson.dumps({**DEMO_DOCUMENT, "id": uuid.uuid4().hex})
        producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers, acks="all")
        await producer.start()
        try:
            meta = await producer.send_and_wait(topic, value, key=b"demo")
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(
            topic,
            bootstrap_servers=kafka.bootstrap_servers,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        )
        await consumer.start()
        try:
            record = await asyncio.wait_for(consumer.getone(), timeout=30)
        finally:
            await consumer.stop()
        if record.value != value:
            raise RuntimeError(f"kafka: read back {record.value!r}, expected {value!r}")
        got = (
            f"partition {record.partition} offset {record.offset}: {record.value.decode()[:70]}..."
        )
        return RoundTrip(
            "kafka",
            f"{topic} key=demo -> partition {meta.partition}",
            got,
            time.perf_counter() - started,
        )
    finally:
        await admin.delete_topics([topic])
        await admin.close()


def weaviate_round_trip(settings: WeaviateSettings) -> RoundTrip:
    """Write one fact with our own vector into a tenant and find it by vector and by hybrid."""
    started = time.perf_counter()
    name = f"FactstreamDemo{uuid.uuid4().hex[:8]}"
    text = "Mike Lawler is the United States representative for New York's 17th district."
    vector = [1.0, 0.5, 0.0, 0.25]
    with weaviate.connect_to_local(
        host=settings.host, port=settings.http_port, grpc_port=settings.grpc_port
    ) as client:
        client.collections.create(
            name,
            properties=[Property(name="text", data_type=DataType.TEXT)],
            vector_config=Configure.Vectors.self_provided(),
            multi_tenancy_config=Configure.multi_tenancy(enabled=True),
        )
        try:
            coll = client.collections.use(name)
            coll.tenants.create([Tenant(name="demo")])
            facts = coll.with_tenant("demo")
            uid = facts.data.insert({"text": text}, vector=vector)
            near = facts.query.near_vector(
                vector, limit=1, return_metadata=MetadataQuery(distance=True)
            )
            hybrid = facts.query.hybrid("Lawler representative", vector=vector, limit=1)
            found = [
                near.objects[0].uuid if near.objects else None,
                hybrid.objects[0].uuid if hybrid.objects else None,
            ]
            if found != [uid, uid]:
                raise RuntimeError(f"weaviate: wrote {uid}, near-vector/hybrid found {found}")
            distance = near.objects[0].metadata.distance
        finally:
            client.collections.delete(name)
    return RoundTrip(
        "weaviate",
        f"{name}[tenant demo] <- {text!r}",
        f"near-vector and hybrid both found {uid} (distance {distance:.3f})",
        time.perf_counter() - started,
    )


async def lm_round_trip(lm: LMSettings) -> RoundTrip:
    """One chat completion from the configured OpenAI-compatible server."""
    started = time.perf_counter()
    question = "In one short sentence: what is a news article?"
    async with AsyncOpenAI(base_url=lm.url, api_key=lm.api_key.get_secret_value()) as client:
        reply = await client.chat.completions.create(
            model=lm.model,
            messages=[{"role": "user", "content": question}],
            max_tokens=48,
            temperature=0.0,
        )
    answer = (reply.choices[0].message.content or "").strip()
    if not answer:
        raise RuntimeError("lm: the completion came back empty")
    usage = reply.usage
    tokens = f" ({usage.prompt_tokens}+{usage.completion_tokens} tokens)" if usage else ""
    return RoundTrip(
        "lm", f"{lm.model} <- {question!r}", f"{answer!r}{tokens}", time.perf_counter() - started
    )


async def run_round_trips(settings: Settings) -> list[RoundTrip]:
    """All three round trips, in order."""
    return [
        await kafka_round_trip(settings.kafka),
        await asyncio.to_thread(weaviate_round_trip, settings.weaviate),
        await lm_round_trip(settings.lm),
    ]
