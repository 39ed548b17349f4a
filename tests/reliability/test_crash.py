"""Crash: the worker SIGKILLed at seeded random points while documents stream (issue 9.1).

After every kill a new worker starts. At the end nothing is lost, nothing is applied twice,
no document reached the LM after its batch was on the changelog, and the knowledge base and
the changelog (deduplicated by edit id) equal those of an uninterrupted run.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections import Counter
from typing import TYPE_CHECKING

from aiokafka import AIOKafkaProducer
from fixtures.decisions import Decisions
from fixtures.reference import (
    assert_batches_in_input_order,
    assert_same,
    conflict_scenario,
    lm_calls_after_batch,
    partition_of,
    reference_snapshot,
    snapshot,
    stream_documents,
    stream_scenario,
)
from fixtures.stack import Stack, StackFactory

from factstream.edit.pipeline import EditPlan, PlannedEdit, to_records
from factstream.streams.changelog import ChangelogPublisher
from factstream.topics.definitions import TopicName
from factstream.topics.records import DecidedBy, Document, EditOp, InputRef

if TYPE_CHECKING:
    from conftest import Figures, Scale, WindowEnv

SEED = 20240917


def _processed(stack: Stack, worker: int) -> int:
    """Outcomes logged by one worker process (redeliveries included)."""
    return stack.worker_log(worker).count(" outcome ")


async def test_sigkill_at_random_points_loses_and_repeats_nothing(
    stack_factory: StackFactory, scale: Scale, figures: Figures, window_env: WindowEnv
) -> None:
    count = scale.pick(1000, 48)
    kills = scale.pick(20, 3)
    # Reduced, the scenario of the restart and LM outage tests: one reference serves all.
    scenario = stream_scenario(count, seed=7)
    reference = await reference_snapshot(stack_factory, scenario)

    rng = random.Random(SEED)  # noqa: S311 - reproducible kill points
    # Kill when this many documents have an outcome (and the current worker did some).
    points = sorted(rng.sample(range(count // 20, count - count // 20), kills))
    # Every LM call waits a little, so a kill lands inside calls as well as between them.
    scenario.decisions.delay = {"[doc-": 0.05}
    stack = await stack_factory(scenario.decisions, **window_env.env)
    began = time.monotonic()
    stack.start_worker()
    streaming = asyncio.create_task(stream_documents(stack, scenario.documents, per_second=25))
    downtimes = []
    for point in points:
        worker = len(stack.workers) - 1
        await stack.wait_outcomes(point, timeout_s=600)

        async def working(worker: int = worker) -> bool:
            return _processed(stack, worker) > 0

        await stack.wait_for(working, f"worker {worker} processing", timeout_s=300)
        await asyncio.sleep(rng.uniform(0, 0.4))
        stack.kill_worker(stack.workers[worker])  # SIGKILL: no shutdown, no last commit
        killed = time.monotonic()
        stack.start_worker()

        async def resumed(worker: int = worker + 1) -> bool:
            return _processed(stack, worker) > 0

        await stack.wait_for(resumed, f"worker {worker + 1} resuming", timeout_s=300)
        downtimes.append(time.monotonic() - killed)
    await streaming
    await stack.wait_outcomes(count, timeout_s=1800)
    elapsed = time.monotonic() - began

    edits = await stack.changelog()
    actual = await snapshot(stack, scenario)
    outcomes = Counter(
        line.split()[-1]
        for i in range(len(stack.workers))
        for line in stack.worker_log(i).splitlines()
        if " outcome " in line
    )
    figures.record(
        window_env.name("crash"),
        f"{count} documents, {kills} SIGKILLs survived in {elapsed:.0f}s; "
        f"kill to first outcome of the next worker {min(downtimes):.1f}-{max(downtimes):.1f}s; "
        f"outcomes {dict(outcomes)}; {len(actual.edits)} edits {actual.ops()}, "
        f"{actual.fact_count} facts; LM requests {stack.lm_stats()['requests']}",
        documents=count,
        kills=kills,
        seconds=round(elapsed, 1),
        kill_to_next_worker_s=[round(d, 1) for d in downtimes],
        outcomes=dict(outcomes),
        edits=len(actual.edits),
        facts=actual.fact_count,
    )
    assert len(stack.workers) == kills + 1
    assert_batches_in_input_order(edits)
    # No document lost, none dead-lettered, every one applied exactly as without crashes.
    assert_same(actual, reference)
    # Every batch went on the changelog once: no document was decided and published twice.
    assert actual.changelog_records == len(actual.edits)
    # No document reached the LM after its batch was on the changelog.
    assert lm_calls_after_batch(stack, edits) == {}
    # No edit applied twice: every history names an edit once.
    for facts in actual.facts.values():
        for fact in facts.values():
            ids = [entry.edit_id for entry in fact.history]
            assert len(ids) == len(set(ids)), fact


async def test_a_transaction_a_killed_worker_left_open_hides_no_batch_from_recovery(
    stack_factory: StackFactory,
) -> None:
    """The crash sequence that random kills rarely hit, made on purpose.

    Worker 1 dies inside a changelog transaction: it stays open until the broker times it
    out, and read_committed readers stop at it. Worker 2 publishes doc-1's batch after it and
    dies before applying it. Worker 3 must still find that batch and apply it without the LM.
    """
    # What the LM would decide for doc-1, were it asked again (it must not be).
    stack = await stack_factory(Decisions(extract={"[doc-1]": ["The ferry resumed service."]}))
    kafka = stack.settings.kafka
    changelog = stack.topic(TopicName.FACT_EDITS)
    # Worker 1's transactional producer, "killed" with a transaction open on every changelog
    # partition. The broker would abort it after its timeout; the test does, further down.
    dead = AIOKafkaProducer(
        bootstrap_servers=kafka.bootstrap_servers, transactional_id=f"killed-{uuid.uuid4().hex}"
    )
    await dead.start()
    await dead.begin_transaction()
    for partition in range(stack.settings.worker.partitions):
        await dead.send_and_wait(changelog, b"{}", partition=partition)

    # Worker 2: doc-1 read, its batch published (committed), then the crash before applying.
    document = {
        "id": "doc-1",
        "namespace": "desk",
        "kind": "article",
        "timestamp": "2024-03-04T00:00:00+00:00",
        "text": "[doc-1] The ferry resumed service.",
    }
    await stack.publish([document])
    source = InputRef(
        topic=stack.topic(TopicName.DOCUMENTS), partition=partition_of("desk"), offset=0
    )
    decided = DecidedBy(model="stub", prompt_version="extract_facts.v1")
    plan = EditPlan(
        Document.model_validate(document),
        [],
        [],
        [PlannedEdit(EditOp.ADD, "The ferry runs again.", decided)],
        False,
    )
    batch = to_records(plan, source)
    publisher = ChangelogPublisher(kafka)
    await publisher.start()
    try:
        await publisher.publish_batch(batch)
    finally:
        await publisher.stop()

    # Worker 3 starts while the transaction is open: it must wait for it to end (and say
    # so) rather than decide doc-1. Then the "broker" aborts it, as after its timeout.
    stack.start_worker()

    async def waits_or_decides() -> bool:
        return "transactions open" in stack.worker_log() or bool(stack.outcomes())

    try:
        await stack.wait_for(waits_or_decides, "worker 3 reaching doc-1", timeout_s=300)
        decided_while_open = dict(stack.outcomes())
        await dead.abort_transaction()
    finally:
        await dead.stop()
    outcomes = await stack.wait_outcomes(1, timeout_s=300)
    assert decided_while_open == {}, "doc-1 was decided past a transaction still open"
    assert list(outcomes.values()) == ["recovered"]
    assert "doc-1" not in stack.lm_stats()["by_document"]  # never sent to the LM again
    assert len([e for e in await stack.changelog() if e.document_id == "doc-1"]) == 1


async def test_sigkill_with_a_full_window_in_flight_loses_and_repeats_nothing(
    stack_factory: StackFactory, figures: Figures
) -> None:
    """Issue 18: killed while 8 documents of a namespace are decided at once, some of them
    committed and not yet acknowledged, the next worker (also W = 8) finishes the stream as
    one worker at W = 1 would, and sends no document whose batch is on the changelog to the
    LM again."""
    scenario = conflict_scenario(40, namespaces=1)
    reference = await reference_snapshot(stack_factory, scenario)
    scenario.decisions.delay = {"[doc-": 0.3}  # slow LM calls: the window stays full
    # LM calls of all 8 documents at once (the client's own limit would hold some back).
    stack = await stack_factory(
        scenario.decisions, FACTSTREAM_EDITOR_WINDOW="8", FACTSTREAM_LM_MAX_CONCURRENCY="32"
    )
    stack.start_worker()
    await stack.publish(scenario.documents)

    async def window_full() -> bool:
        decided = {doc for _, doc, _ in stack.lm_stats()["journal"]}
        return len(stack.outcomes()) >= 10 and len(decided) - len(stack.outcomes()) >= 7

    await stack.wait_for(window_full, "a full window in flight", timeout_s=300)
    in_flight = len({doc for _, doc, _ in stack.lm_stats()["journal"]}) - len(stack.outcomes())
    stack.kill_worker(stack.workers[0])  # SIGKILL: no shutdown, no last commit
    killed_after = len(stack.outcomes())
    stack.start_worker()
    outcomes = await stack.wait_outcomes(len(scenario.documents), timeout_s=600)

    edits = await stack.changelog()
    actual = await snapshot(stack, scenario)
    assert_same(actual, reference)
    assert actual.changelog_records == len(actual.edits)  # no batch published twice
    assert lm_calls_after_batch(stack, edits) == {}
    assert_batches_in_input_order(edits)
    second = Counter(
        line.split()[-1] for line in stack.worker_log(1).splitlines() if " outcome " in line
    )
    figures.record(
        "crash_full_window",
        f"{len(scenario.documents)} documents, W=8, SIGKILL with {in_flight} in flight after "
        f"{killed_after} outcomes; next worker's outcomes {dict(second)}",
        documents=len(scenario.documents),
        in_flight_at_kill=in_flight,
        outcomes_before_kill=killed_after,
        next_worker_outcomes=dict(second),
    )
    assert set(outcomes.values()) <= {"applied", "recovered", "duplicate"}
