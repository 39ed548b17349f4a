"""Scale-out (issue 25): several workers in one consumer group on a three-broker Kafka and a
three-node Weaviate (tests/fixtures/cluster.py), against an uninterrupted single-worker
reference of the same documents.

Rebalance protocol: aiokafka (under faust) implements only Kafka's classic group protocol
with eager rebalancing, so every join or leave revokes all partitions and assigns them
again; faust stops a partition's actor at revocation, before the new owner starts one. No
static membership (group.instance.id): a stopped worker should hand its partitions over at
once (a static member sends no LeaveGroup and holds them for the whole session timeout),
and workers in a Deployment have no stable identity to give it. Zombies are fenced by the
publisher of each documents partition having a fixed transactional id
(factstream.agents.worker.partition_transactional_id): the new owner's publisher takes the
id over, which aborts the old owner's open transaction and refuses its next send.
"""

from __future__ import annotations

import asyncio
import random
import re
import signal
import subprocess
import time
from collections import Counter
from typing import TYPE_CHECKING

import pytest
from aiokafka.errors import ProducerFenced
from fixtures.cluster import PrivateCluster, private_cluster
from fixtures.reference import (
    Scenario,
    Snapshot,
    assert_batches_in_input_order,
    assert_same,
    lm_calls_after_batch,
    reference_snapshot,
    snapshot,
    stream_documents,
    stream_scenario,
)
from fixtures.stack import Stack, StackFactory

from factstream.agents.worker import EXIT_FENCED, partition_transactional_id
from factstream.knowledge.pipeline import EditPlan, PlannedEdit, to_records
from factstream.streams.changelog import ChangelogPublisher
from factstream.topics.records import DecidedBy, Document, EditOp, FactEdit, InputRef

if TYPE_CHECKING:
    from conftest import Figures, Scale

__all__ = ["private_cluster"]

SEED = 20261125
PARTITIONS = 8
_GENERATION = re.compile(r"Joined group '[^']+' \(generation (\d+)\)")
_ENV = {"FACTSTREAM_WORKER_PARTITIONS": str(PARTITIONS)}


def _env(cluster: PrivateCluster) -> dict[str, str]:
    return {**cluster.env, **_ENV}


def _logs(stack: Stack) -> str:
    return "".join(stack.worker_log(i) for i in range(len(stack.workers)))


def generations(stack: Stack) -> set[int]:
    """The consumer group generations any worker joined: one per completed rebalance."""
    return {int(g) for g in _GENERATION.findall(_logs(stack))}


def _running(stack: Stack) -> list[subprocess.Popen[bytes]]:
    return [w for w in stack.workers if w.poll() is None]


def _check(actual: Snapshot, reference: Snapshot, stack: Stack, edits: list[FactEdit]) -> None:
    assert_batches_in_input_order(edits)  # per namespace, in input order
    assert_same(actual, reference)  # the knowledge base and deduplicated changelog
    assert actual.changelog_records == len(actual.edits)  # no batch published twice
    assert lm_calls_after_batch(stack, edits) == {}


async def _reference(stack_factory: StackFactory, scenario: Scenario) -> Snapshot:
    """One worker on the shared single-node services, nothing interrupted."""
    return await reference_snapshot(stack_factory, scenario, **_ENV)


async def test_three_workers_in_one_group_through_seeded_rebalances(
    private_cluster: PrivateCluster, stack_factory: StackFactory, scale: Scale, figures: Figures
) -> None:
    count = scale.pick(1000, 96)
    events = scale.pick(12, 5)  # each a stop or kill and a start: two rebalances or more
    scenario = stream_scenario(count, seed=25, shops=32)
    reference = await _reference(stack_factory, scenario)

    rng = random.Random(SEED)  # noqa: S311 - reproducible fault points
    points = sorted(rng.sample(range(count // 10, count - count // 10), events))
    scenario.decisions.delay = {"[doc-": 0.05}  # faults land inside LM calls too
    stack = await stack_factory(scenario.decisions, **_env(private_cluster))
    began = time.monotonic()
    for _ in range(3):
        stack.start_worker()
    streaming = asyncio.create_task(stream_documents(stack, scenario.documents, per_second=25))
    actions: Counter[str] = Counter()
    for point in points:
        await stack.wait_outcomes(point, timeout_s=900)
        victim = rng.choice(_running(stack))
        action = rng.choice(["SIGTERM", "SIGKILL"])
        stack.kill_worker(victim, getattr(signal, action))
        actions[action] += 1
        await asyncio.sleep(rng.uniform(0, 2))
        stack.start_worker()
    await streaming
    await stack.wait_outcomes(count, timeout_s=1800)
    elapsed = time.monotonic() - began

    edits = await stack.changelog()
    actual = await snapshot(stack, scenario)
    rebalances = len(generations(stack))
    outcomes = Counter(m.split()[-1] for m in re.findall(r" outcome \S+ \w+", _logs(stack)))
    figures.record(
        "scaleout_group",
        f"{count} documents in 32 namespaces over {PARTITIONS} partitions, 3 workers, "
        f"{dict(actions)} (each followed by a start), {rebalances} group generations, "
        f"{len(stack.workers)} worker processes in all, {elapsed:.0f}s; outcomes "
        f"{dict(outcomes)}; {len(actual.edits)} edits, {actual.fact_count} facts",
        documents=count,
        actions=dict(actions),
        generations=rebalances,
        workers=len(stack.workers),
        seconds=round(elapsed, 1),
        outcomes=dict(outcomes),
    )
    _check(actual, reference, stack, edits)
    assert rebalances >= scale.pick(10, 5)


async def test_a_zombie_worker_is_fenced_and_publishes_nothing(
    private_cluster: PrivateCluster, stack_factory: StackFactory, scale: Scale, figures: Figures
) -> None:
    """A worker paused (SIGSTOP) past its session timeout loses its partitions; resumed, it
    must not publish a batch for a document its successor also decides."""
    scenario = stream_scenario(scale.pick(200, 64), seed=26, shops=16)
    reference = await _reference(stack_factory, scenario)
    scenario.decisions.delay = {"[doc-": 0.5}  # a worker is inside an LM call most of the time
    stack = await stack_factory(scenario.decisions, **_env(private_cluster))
    zombie = stack.start_worker()
    stack.start_worker()  # its successor
    stack.may_fail.add(zombie.pid)
    await stack.publish(scenario.documents)

    def outcomes_of(worker: int) -> list[tuple[int, int]]:
        found = re.findall(r" outcome \S+\[(\d+)\]@(\d+) ", stack.worker_log(worker))
        return [(int(p), int(o)) for p, o in found]

    async def both_working() -> bool:
        return len(outcomes_of(0)) >= 2 and len(outcomes_of(1)) >= 1

    await stack.wait_for(both_working, "both workers editing", timeout_s=300)
    zombie.send_signal(signal.SIGSTOP)
    paused = time.monotonic()
    owned = {p for p, _ in outcomes_of(0)}
    seen = len(outcomes_of(1))

    async def taken_over() -> bool:
        return any(p in owned for p, _ in outcomes_of(1)[seen:])

    await stack.wait_for(taken_over, "the successor editing the zombie's partitions", 300)
    took_over_s = time.monotonic() - paused
    zombie_log_at_resume = len(stack.worker_log(0))
    zombie.send_signal(signal.SIGCONT)
    await stack.wait_outcomes(len(scenario.documents), timeout_s=900)
    after = stack.worker_log(0)[zombie_log_at_resume:]
    fenced = "fenced on partition" in after
    status = zombie.poll()

    edits = await stack.changelog()
    actual = await snapshot(stack, scenario)
    figures.record(
        "scaleout_zombie",
        f"{len(scenario.documents)} documents, 2 workers; one paused {took_over_s:.1f}s until "
        f"its successor edited its partitions; resumed: "
        f"{'fenced, exit ' + str(status) if fenced else 'revoked before publishing'}; "
        f"outcomes it logged after resuming {after.count(' outcome ')}",
        documents=len(scenario.documents),
        paused_until_takeover_s=round(took_over_s, 1),
        fenced=fenced,
        exit_status=status,
    )
    if fenced:
        assert status == EXIT_FENCED
    _check(actual, reference, stack, edits)


async def test_a_partitions_new_publisher_fences_the_old_one(
    private_cluster: PrivateCluster, stack_factory: StackFactory
) -> None:
    """The mechanism alone, without timing luck: the old owner's batch is refused."""
    stack = await stack_factory(None, **_env(private_cluster))
    kafka, app_id = stack.settings.kafka, stack.settings.worker.app_id
    txn_id = partition_transactional_id(app_id, 3)
    old, new = (ChangelogPublisher(kafka, app_id, transactional_id=txn_id) for _ in range(2))
    document = Document.model_validate(
        {
            "id": "doc-1",
            "namespace": "desk",
            "kind": "article",
            "timestamp": "2024-03-04T00:00:00+00:00",
            "text": "[doc-1] The ferry resumed service.",
        }
    )
    decided = DecidedBy(model="stub", prompt_version="extract_facts.v1")
    plan = EditPlan(document, [], [], [PlannedEdit(EditOp.ADD, "The ferry runs.", decided)], False)
    batch = to_records(plan, InputRef(topic="documents", partition=3, offset=0))
    await old.start()
    try:
        await new.start()  # the partition's new owner
        try:
            with pytest.raises(ProducerFenced):
                await old.publish_batch(batch)
            await new.publish_batch(batch)
        finally:
            await new.stop()
    finally:
        await old.stop()
    assert len(await stack.changelog()) == len(batch)  # the new owner's copy only
