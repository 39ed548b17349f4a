"""The PostgreSQL mirror on real Kafka and PostgreSQL (issue 24).

A worker (with the deterministic stub LM) edits documents in while the mirror follows: the
mirror holds the facts Weaviate holds. The changelog of the other tests is a seeded synthetic
stream of every op (``fixtures/changelog_stream.py``),
published in transactions as a worker publishes them and applied live by the materializer
into Weaviate: the knowledge base. The mirror, reading the same changelog, must hold the
same facts; a mirror rebuilt from the beginning into a fresh database must hold the same
tables; a record of an unknown schema version goes to the dead-letter table while the rest
flows. (SIGKILLs of the mirror: tests/reliability/test_mirror_kills.py.)
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import orjson
import psycopg
from aiokafka import AIOKafkaProducer
from fixtures.changelog_stream import fold, synthetic_batches
from fixtures.decisions import Decisions
from fixtures.stack import StackFactory

from factstream.config import MirrorSettings
from factstream.edit.materializer import Materializer
from factstream.embed.fake import HashingEmbedder
from factstream.mirror.runner import run_mirror
from factstream.mirror.store import MirrorStore
from factstream.streams.changelog import ChangelogPublisher
from factstream.topics.definitions import TopicName
from factstream.topics.records import Fact, FactEdit, accepted_versions

NAMESPACES = ["desk", "sports"]
FAST = MirrorSettings(poll_s=0.2)


async def _mirrored(dsn: str, topic: str) -> dict[str, dict[str, Fact]]:
    conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
    try:
        store = MirrorStore(conn, topic)
        return {ns: await store.facts(ns) for ns in NAMESPACES}
    finally:
        await conn.close()


def _tables(dsn: str) -> dict[str, list[tuple[Any, ...]]]:
    with psycopg.connect(dsn) as conn:
        return {
            "facts": conn.execute(
                "SELECT namespace, fact_id, text, truth, valid::text, history, record "
                "FROM facts ORDER BY namespace, fact_id"
            ).fetchall(),
            "edits": conn.execute(
                "SELECT edit_id, namespace, fact_id, op, changelog_partition, changelog_offset, "
                "skipped, record FROM edits ORDER BY edit_id"
            ).fetchall(),
            "batches": conn.execute("SELECT * FROM mirror_batches ORDER BY 1, 2").fetchall(),
        }


def _count(dsn: str, query: str) -> int:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(query).fetchone()
    return int(row[0]) if row else 0


async def test_the_mirror_equals_the_knowledge_base_and_a_rebuild_equals_it(
    stack_factory: StackFactory, database_factory: Callable[[], str]
) -> None:
    stack = await stack_factory()
    kafka, topic = stack.settings.kafka, stack.topic(TopicName.FACT_EDITS)
    batches = synthetic_batches(NAMESPACES, 120, seed=3)
    live, rebuilt = database_factory(), database_factory()
    mirror = asyncio.create_task(run_mirror(kafka, FAST, live, follow=True))
    publisher, store = ChangelogPublisher(kafka), await stack.store()
    await publisher.start()
    try:
        materializer = Materializer(store, HashingEmbedder(dim=32))
        for batch in batches:  # as the worker does: publish, then apply
            await publisher.publish_batch(batch)
            assert (await materializer.apply(batch)).skipped == []
        deadline = time.monotonic() + 60
        while _count(live, "SELECT count(*) FROM edits") < 120:
            assert not mirror.done(), mirror
            assert time.monotonic() < deadline, "the mirror did not catch up in 60 s"
            await asyncio.sleep(0.2)
        knowledge_base = {}
        for ns in NAMESPACES:
            page = await store.list_facts(ns, include_false=True, limit=500)
            knowledge_base[ns] = {fact.fact_id: fact for fact in page.facts}
    finally:
        mirror.cancel()
        await publisher.stop()
        await store.close()
    expected = fold(batches)
    assert sum(len(facts) for facts in expected.values()) > 40
    assert knowledge_base == expected
    assert await _mirrored(live, topic) == knowledge_base
    assert _count(live, "SELECT edits_applied FROM mirror_stats") == 120
    assert _count(live, "SELECT duplicate_batches FROM mirror_stats") == 0

    # The rebuild writes in transactions of 7 batches: the same tables.
    parts = MirrorSettings(poll_s=0.2, max_transaction_batches=7)
    report = await run_mirror(kafka, parts, rebuilt, follow=False)
    assert (report.edits, report.batches, report.duplicates) == (120, len(batches), 0)
    assert report.rounds == -(-len(batches) // 7)
    assert _tables(rebuilt) == _tables(live)


async def test_an_unknown_schema_version_is_dead_lettered_and_the_rest_flows(
    stack_factory: StackFactory, database_factory: Callable[[], str]
) -> None:
    stack = await stack_factory()
    kafka, topic = stack.settings.kafka, stack.topic(TopicName.FACT_EDITS)
    batches = synthetic_batches(NAMESPACES, 30, seed=5)
    known = accepted_versions(FactEdit)
    newer = max(known) + 1
    future = {**orjson.loads(batches[0][0].to_bytes()), "schema_version": newer, "edit_id": "v4"}
    future["certainty"] = 0.9  # a field a newer version might add
    publisher = ChangelogPublisher(kafka)
    raw = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers)
    await publisher.start()
    await raw.start()
    try:
        half = len(batches) // 2
        for batch in batches[:half]:
            await publisher.publish_batch(batch)
        await raw.send_and_wait(topic, orjson.dumps(future), key=b"v4", partition=0)
        await raw.send_and_wait(topic, b"{not json", key=b"bad", partition=1)
        for batch in batches[half:]:
            await publisher.publish_batch(batch)
    finally:
        await raw.stop()
        await publisher.stop()
    dsn = database_factory()
    report = await run_mirror(kafka, FAST, dsn, follow=False)
    assert (report.edits, report.dead_letters) == (30, 2)
    with psycopg.connect(dsn) as conn:
        dead = conn.execute(
            "SELECT partition, key, kind, schema_version, reason, value FROM dead_letters "
            "ORDER BY partition"
        ).fetchall()
    assert [row[:4] for row in dead] == [
        (0, "v4", "unknown_version", newer),
        (1, "bad", "malformed", None),
    ]
    reads = ", ".join(map(str, known))
    assert f"schema_version {newer} is unknown to this reader (it reads {reads})" in dead[0][4]
    assert orjson.loads(dead[0][5]) == future  # the original bytes, kept
    assert "not valid JSON" in dead[1][4]
    assert await _mirrored(dsn, topic) == fold(batches)


async def test_the_mirror_of_a_worker_s_changelog_equals_its_knowledge_base(
    stack_factory: StackFactory, database_factory: Callable[[], str]
) -> None:
    decisions = Decisions(
        extract={
            "doc-1": ["Ana is the mayor of Riverton.", "Riverton has a bridge."],
            "doc-2": ["Riverton's bridge reopened.", "Ben is the mayor of Riverton."],
        }
    )
    stack = await stack_factory(decisions)
    dsn = database_factory()
    mirror = asyncio.create_task(run_mirror(stack.settings.kafka, FAST, dsn, follow=True))
    stack.start_worker()
    try:
        day = "2023-01-{:02d}T00:00:00+00:00"
        await stack.publish(
            [
                {
                    "id": "doc-1",
                    "namespace": "desk",
                    "kind": "article",
                    "timestamp": day.format(1),
                    "text": "[doc-1] Ana is the mayor of Riverton, which has a bridge.",
                }
            ]
        )
        await stack.wait_outcomes(1)
        decisions.false = {"mayor of Riverton": "Ben is the mayor of Riverton."}
        decisions.reinforce = {"bridge"}
        stack.decide(decisions)
        await stack.publish(
            [
                {
                    "id": "doc-2",
                    "namespace": "desk",
                    "kind": "article",
                    "timestamp": day.format(9),
                    "text": "[doc-2] Ben became mayor of Riverton; its bridge reopened.",
                }
            ]
        )
        assert sorted((await stack.wait_outcomes(2)).values()) == ["applied", "applied"]
        changelog = await stack.changelog()
        deadline = time.monotonic() + 60
        while _count(dsn, "SELECT count(*) FROM edits") < len(changelog):
            assert not mirror.done(), mirror
            assert time.monotonic() < deadline, "the mirror did not catch up in 60 s"
            await asyncio.sleep(0.2)
    finally:
        mirror.cancel()
    store = await stack.store()
    try:
        page = await store.list_facts("desk", include_false=True, limit=100)
    finally:
        await store.close()
    knowledge_base = {fact.fact_id: fact for fact in page.facts}
    assert {e.op.value for e in changelog} >= {"add", "rewrite"}
    assert len(knowledge_base) >= 4
    mirrored = await _mirrored(dsn, stack.topic(TopicName.FACT_EDITS))
    assert mirrored["desk"] == knowledge_base


async def test_a_batch_the_worker_published_twice_is_mirrored_once(
    stack_factory: StackFactory, database_factory: Callable[[], str]
) -> None:
    """As after a worker's crash between publish and commit: a document's batch is on the
    changelog twice, once as the same decisions again (an exact copy, created later) and,
    for another document, as different decisions (the same edit ids, another batch id and
    text). The knowledge base keeps the first batch of each; so does the mirror, whether
    the second comes in a later round (after a restart) or in the same one (a rebuild)."""
    stack = await stack_factory()
    kafka, topic = stack.settings.kafka, stack.topic(TopicName.FACT_EDITS)
    batches = synthetic_batches(NAMESPACES, 40, seed=9)
    copy_of, remade_of = batches[4], batches[7]
    later = batches[-1][0].created_at + timedelta(days=1)
    copy = [e.model_copy(update={"created_at": later}) for e in copy_of]
    remade = [
        e.model_copy(
            update={
                "text": f"{e.text} (decided again)",
                "batch": e.batch.model_copy(update={"id": f"{e.batch.id}-again"}),
                "created_at": later,
            }
        )
        for e in remade_of
    ]
    live, rebuilt = database_factory(), database_factory()
    publisher, store = ChangelogPublisher(kafka), await stack.store()
    await publisher.start()
    try:
        materializer = Materializer(store, HashingEmbedder(dim=32))
        for batch in batches[:10]:
            await publisher.publish_batch(batch)
            assert (await materializer.apply(batch)).applied
        first = await run_mirror(kafka, FAST, live, follow=False)
        # The worker's next life publishes both again, then finds them applied.
        for again in (copy, remade):
            await publisher.publish_batch(again)
            assert not (await materializer.apply(again)).applied
        for batch in batches[10:]:
            await publisher.publish_batch(batch)
            assert (await materializer.apply(batch)).applied
        knowledge_base = {}
        for ns in NAMESPACES:
            page = await store.list_facts(ns, include_false=True, limit=500)
            knowledge_base[ns] = {fact.fact_id: fact for fact in page.facts}
    finally:
        await publisher.stop()
        await store.close()
    assert knowledge_base == fold(batches)
    second = await run_mirror(kafka, FAST, live, follow=False)
    assert (first.batches, first.duplicates) == (10, 0)
    assert (first.edits + second.edits, second.batches) == (40, len(batches) - 10)
    assert second.duplicates == 2
    assert await _mirrored(live, topic) == knowledge_base
    with psycopg.connect(live) as conn:
        rows = conn.execute(
            "SELECT edit_id, batch_id, record->>'text' FROM edits WHERE document_id = ANY(%s)",
            ([copy_of[0].document_id, remade_of[0].document_id],),
        ).fetchall()
        stats = conn.execute("SELECT duplicate_batches FROM mirror_stats").fetchone()
    assert sorted(rows) == sorted((e.edit_id, e.batch.id, e.text) for e in [*copy_of, *remade_of])
    assert stats == (2,)

    # Rebuilt in one round: the copy merges into its first batch (the same batch id), the
    # remade batch is passed over; the same tables.
    rebuild = await run_mirror(kafka, FAST, rebuilt, follow=False)
    assert (rebuild.edits, rebuild.batches, rebuild.duplicates) == (40, len(batches), 1)
    assert _tables(rebuilt) == _tables(live)
