"""What one changelog transaction costs the Kafka broker, by how its records spread (issue 37).

    python -m bench.kafka_txn [--rounds 12] [--per-round 25] [--out results/bench]

A document's commit is one transaction: its edits on ``factstream.fact-edits`` keyed by
fact id and the facts' new states on ``factstream.facts``, so its records land on several
partitions of each (8 by default), and the broker writes a commit marker on each. This
sends transactions of the same size (``--records`` on each topic, 600-byte values) on two
fresh 8-partition topics of the local broker, shaped three ways taking turns round by
round: ``spread`` (keys hashed, as today), ``one partition`` (every record of a
transaction on one partition of each topic, the same partition for the transaction), and
``two in one`` (two documents' records in one transaction, spread). Per transaction: the
broker's CPU ms (its process, shared with other sessions: the rounds alternate so their
work falls on every shape alike) and this process's. Writes ``<stamp>-kafka-txn.json``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from bench.measure import _cpu_seconds
from bench.report import write_named
from factstream.config import load_settings
from factstream_lab import provenance
from factstream_lab.stack import manager
from factstream_lab.stack.process import read_pid

__all__ = ["main"]

_PARTITIONS = 8
_VALUE = b"x" * 600


def _kafka_pid() -> int:
    settings = load_settings()
    for svc in manager.build_services(settings, ["kafka"]):
        pid = read_pid(svc.pidfile)
        if pid is not None:
            return pid
    raise RuntimeError("no local Kafka running (factstream services up)")


async def _transaction(
    producer: AIOKafkaProducer, topics: tuple[str, str], shape: str, records: int, n: int
) -> None:
    docs = 2 if shape == "two in one" else 1
    async with producer.transaction():
        for d in range(docs):
            for topic in topics:
                for r in range(records):
                    key = f"fact-{n}-{d}-{r}".encode()
                    partition = n % _PARTITIONS if shape == "one partition" else None
                    await producer.send(topic, _VALUE, key=key, partition=partition)


async def _run(rounds: int, per_round: int, records: int) -> dict[str, Any]:
    settings = load_settings()
    servers = settings.kafka.bootstrap_servers
    prefix = f"bench-kafka-txn-{uuid.uuid4().hex[:8]}-"
    topics = (f"{prefix}fact-edits", f"{prefix}facts")
    admin = AIOKafkaAdminClient(bootstrap_servers=servers)
    await admin.start()
    try:
        await admin.create_topics(
            [NewTopic(t, num_partitions=_PARTITIONS, replication_factor=1) for t in topics]
        )
        producer = AIOKafkaProducer(
            bootstrap_servers=servers,
            transactional_id=f"{prefix}txn",
            enable_idempotence=True,
            acks="all",
        )
        await producer.start()
        kafka = _kafka_pid()
        shapes = ["spread", "one partition", "two in one"]
        broker: dict[str, list[float]] = {s: [] for s in shapes}
        ours: dict[str, list[float]] = {s: [] for s in shapes}
        wall: dict[str, list[float]] = {s: [] for s in shapes}
        n = 0
        try:
            for _ in range(3):  # warm-up: JIT, connections, partitions added
                for shape in shapes:
                    n += 1
                    await _transaction(producer, topics, shape, records, n)
            for r in range(rounds):
                order = shapes[r % 3 :] + shapes[: r % 3]
                for shape in order:
                    k0, c0, w0 = _cpu_seconds(kafka), time.process_time(), time.perf_counter()
                    for _ in range(per_round):
                        n += 1
                        await _transaction(producer, topics, shape, records, n)
                    broker[shape].append((_cpu_seconds(kafka) - k0) / per_round)
                    ours[shape].append((time.process_time() - c0) / per_round)
                    wall[shape].append((time.perf_counter() - w0) / per_round)
        finally:
            await producer.stop()
        await admin.delete_topics(list(topics))
    finally:
        await admin.close()

    def ms(values: list[float]) -> dict[str, float]:
        return {
            "mean": round(statistics.fmean(values) * 1000, 3),
            "median": round(statistics.median(values) * 1000, 3),
        }

    spread = statistics.fmean(broker["spread"])
    return {
        "shapes": {
            s: {
                "documents_per_transaction": 2 if s == "two in one" else 1,
                "broker_cpu_ms_per_transaction": ms(broker[s]),
                "our_cpu_ms_per_transaction": ms(ours[s]),
                "wall_ms_per_transaction": ms(wall[s]),
                "broker_cpu_over_spread": round(statistics.fmean(broker[s]) / spread, 3),
            }
            for s in shapes
        },
    }


def main(
    rounds: Annotated[int, typer.Option(help="Rounds; each times every shape once.")] = 12,
    per_round: Annotated[int, typer.Option(help="Transactions per shape per round.")] = 25,
    records: Annotated[int, typer.Option(help="Records per topic per document.")] = 4,
    out: Annotated[Path, typer.Option(help="Where results go.")] = Path("results/bench"),
) -> None:
    """Time the broker's CPU per changelog transaction, by how its records spread."""
    load_start = [round(x, 2) for x in os.getloadavg()]
    got = asyncio.run(_run(rounds, per_round, records))
    result = {
        "timestamp": datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ"),
        "commit": provenance.commit(),
        "what": "per transaction, records per topic per document "
        f"{records}, {_PARTITIONS} partitions a topic, {rounds} rounds of {per_round}",
        "load_avg_at_start": load_start,
        "load_avg_at_end": [round(x, 2) for x in os.getloadavg()],
        **got,
    }
    write_named(result, out, "kafka-txn")


if __name__ == "__main__":
    typer.run(main)
