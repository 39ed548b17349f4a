"""``factstream changelog tail`` and ``factstream.consumer`` on real Kafka (issue 24)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from datetime import UTC, datetime

from fixtures.changelog_stream import synthetic_batches
from fixtures.stack import StackFactory

from factstream.consumer import ChangelogConsumer
from factstream.streams.changelog import ChangelogPublisher
from factstream.topics.definitions import TopicName
from factstream.topics.records import EditOp, FactEdit


def _tail(env: dict[str, str], *args: str) -> list[str]:
    run = subprocess.run(
        [sys.executable, "-m", "factstream", "changelog", "tail", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout.splitlines()


async def test_tail_shows_a_namespace_s_committed_edits_as_json_and_lines(
    stack_factory: StackFactory,
) -> None:
    stack = await stack_factory()
    batches = synthetic_batches(["desk", "sports"], 60, seed=11)
    publisher = ChangelogPublisher(stack.settings.kafka)
    await publisher.start()
    try:
        for batch in batches:
            await publisher.publish_batch(batch)
        # An aborted transaction: read_committed readers never see it.
        ghost = synthetic_batches(["desk"], 3, seed=99)[0]
        producer = publisher.sender.producer
        await producer.begin_transaction()
        for edit in ghost:
            await producer.send(stack.topic(TopicName.FACT_EDITS), edit.to_bytes(), key=b"g")
        await producer.abort_transaction()
    finally:
        await publisher.stop()
    desk = sorted((e for b in batches for e in b if e.namespace == "desk"), key=lambda e: e.edit_id)
    lines = _tail(stack.env, "-n", "desk", "--json")
    shown = [FactEdit.from_bytes(line.encode()) for line in lines]
    assert sorted(shown, key=lambda e: e.edit_id) == desk
    adds = _tail(stack.env, "-n", "desk", "--op", "add", "--from-beginning")
    assert len(adds) == sum(e.op is EditOp.ADD for e in desk) > 0
    assert all(" desk add true " in line for line in adds)
    times = [line.split()[0] for line in adds]  # event times: published in that order
    assert times == sorted(times)


async def test_the_consumer_resumes_from_its_group_and_drops_repeated_edits(
    stack_factory: StackFactory,
) -> None:
    stack = await stack_factory()
    kafka = stack.settings.kafka
    batches = synthetic_batches(["desk"], 20, seed=13)
    publisher = ChangelogPublisher(kafka)
    await publisher.start()
    try:
        for batch in batches[:-1]:
            await publisher.publish_batch(batch)
        await publisher.publish_batch(batches[0])  # a batch published twice
        group = f"{kafka.topic_prefix}downstream"
        async with ChangelogConsumer(kafka, group_id=group) as first:
            seen = [e.edit for e in [x async for x in first.read_to_end()] if e.edit]
            await first.commit()
            assert first.duplicates == len(batches[0])
        assert sorted(e.edit_id for e in seen) == sorted(e.edit_id for b in batches[:-1] for e in b)
        await publisher.publish_batch(batches[-1])
        async with ChangelogConsumer(kafka, group_id=group) as second:
            resumed = [e.edit for e in [x async for x in second.read_to_end()] if e.edit]
            assert await second.lag() == 0
    finally:
        await publisher.stop()
    assert sorted(e.edit_id for e in resumed) == sorted(e.edit_id for e in batches[-1])


async def test_tail_since_a_time_starts_at_the_first_record_written_then(
    stack_factory: StackFactory,
) -> None:
    stack = await stack_factory()
    batches = synthetic_batches(["desk"], 20, seed=19)
    half = len(batches) // 2
    publisher = ChangelogPublisher(stack.settings.kafka)
    await publisher.start()
    try:
        for batch in batches[:half]:
            await publisher.publish_batch(batch)
        await asyncio.sleep(1.0)
        since = datetime.now(UTC)
        await asyncio.sleep(1.0)
        for batch in batches[half:]:
            await publisher.publish_batch(batch)
    finally:
        await publisher.stop()
    lines = _tail(stack.env, "--since", since.isoformat(), "--json")
    later = sorted(e.edit_id for b in batches[half:] for e in b)
    assert sorted(FactEdit.from_bytes(line.encode()).edit_id for line in lines) == later
