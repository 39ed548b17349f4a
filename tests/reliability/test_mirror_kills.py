"""SIGKILL the PostgreSQL mirror at seeded points while the changelog grows (issue 24).

Full size (`make reliability`): 10 kills over 1,000 edits; reduced (`make test`): 3 over
200. The stream (``fixtures/changelog_stream.py``) is published at a pace that spans the
kills; each kill comes once the database holds a seeded share of the edits, after a seeded
delay (so it lands anywhere: reading, folding, inside the transaction, idle). After the
last restart the mirror runs until caught up. Then: every edit is in the ``edits`` table
once (0 lost), the running count of edits applied equals the number of edits and no
document batch was met twice (0 applied twice: a round re-read after its commit would
count again or show as a duplicate), and the facts equal the fold of the stream.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import psycopg
from fixtures.changelog_stream import fold, synthetic_batches
from fixtures.stack import StackFactory

from factstream.config import KafkaSettings
from factstream.mirror.schema import DDL
from factstream.mirror.store import MirrorStore
from factstream.streams.changelog import ChangelogPublisher
from factstream.topics.definitions import TopicName
from factstream.topics.records import FactEdit

if TYPE_CHECKING:
    from conftest import Figures, Scale

NAMESPACES = ["desk", "sports", "world"]


def _one(dsn: str, query: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(query).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


async def _publish(kafka: KafkaSettings, batches: list[list[FactEdit]], seconds: float) -> None:
    publisher = ChangelogPublisher(kafka)
    await publisher.start()
    try:
        pause = seconds / len(batches)
        for batch in batches:
            await publisher.publish_batch(batch)
            await asyncio.sleep(pause)
    finally:
        await publisher.stop()


async def test_sigkilled_mirror_loses_nothing_and_applies_nothing_twice(
    stack_factory: StackFactory,
    database_factory: Callable[[], str],
    scale: Scale,
    figures: Figures,
) -> None:
    edits, kills = scale.pick(1000, 200), scale.pick(10, 3)
    rng = random.Random(24)  # noqa: S311 - seeded kill points, not secrets
    stack = await stack_factory()
    batches = synthetic_batches(NAMESPACES, edits, seed=24)
    dsn = database_factory()
    with psycopg.connect(dsn) as conn:
        conn.execute(DDL)  # the mirror creates them too; the test counts from the start
    env = {
        **os.environ,
        **stack.env,
        "FACTSTREAM_MIRROR_POLL_S": "0.1",
        "FACTSTREAM_MIRROR_METRICS_PORT": "0",
        # Small transactions: a restart also resumes inside a round written in parts.
        "FACTSTREAM_MIRROR_MAX_TRANSACTION_BATCHES": "4",
    }
    mirror = [sys.executable, "-m", "factstream", "mirror", "postgres", "--dsn", dsn]
    logs = stack.tmp / "mirror.log"
    publishing = asyncio.create_task(_publish(stack.settings.kafka, batches, 3.0 * kills))
    killed_at: list[int] = []
    started = time.monotonic()
    with logs.open("ab") as log:
        for kill in range(kills):
            proc = subprocess.Popen(mirror, env=env, stdout=log, stderr=subprocess.STDOUT)  # noqa: S603
            target = (kill + 1) * edits // (kills + 1) + rng.randint(-5, 5)
            deadline = time.monotonic() + 120
            while _one(dsn, "SELECT count(*) FROM edits") < target:
                assert proc.poll() is None, logs.read_text()[-2000:]
                assert time.monotonic() < deadline, f"no progress to {target} edits"
                await asyncio.sleep(0.05)
            await asyncio.sleep(rng.uniform(0.0, 0.3))
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
            killed_at.append(_one(dsn, "SELECT count(*) FROM edits"))
        await publishing
        final = subprocess.run(  # noqa: S603
            [*mirror, "--until-caught-up"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=300,
            check=False,
        )
    assert final.returncode == 0, logs.read_text()[-2000:]
    seconds = time.monotonic() - started

    applied = _one(dsn, "SELECT edits_applied FROM mirror_stats")
    duplicates = _one(dsn, "SELECT duplicate_batches FROM mirror_stats")
    rows = _one(dsn, "SELECT count(*) FROM edits")
    lost = edits - rows
    twice = duplicates + max(0, applied - rows)  # met again after a restart, or counted twice
    figures.record(
        "mirror_kills",
        f"{kills} SIGKILLs over {edits} edits ({len(batches)} batches): {lost} lost, "
        f"{twice} applied twice; kills at {killed_at} edits in the database; {seconds:.0f} s",
        edits=edits,
        batches=len(batches),
        kills=kills,
        killed_at=killed_at,
        lost=lost,
        applied_twice=twice,
        seconds=round(seconds, 1),
    )
    assert len(killed_at) == kills and killed_at[0] < killed_at[-1] < edits
    assert (rows, applied, duplicates) == (edits, edits, 0)
    assert _one(dsn, "SELECT count(*) FROM mirror_batches") == len(batches)
    topic = stack.topic(TopicName.FACT_EDITS)
    conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
    try:
        store = MirrorStore(conn, topic)
        mirrored = {ns: await store.facts(ns) for ns in NAMESPACES}
    finally:
        await conn.close()
    assert mirrored == fold(batches)
