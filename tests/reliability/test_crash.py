"""Crash: the worker SIGKILLed at seeded random points while documents stream (issue 9.1).

After every kill a new worker starts. At the end nothing is lost, nothing is applied twice,
no document reached the LM after its batch was on the changelog, and the knowledge base and
the changelog (deduplicated by edit id) equal those of an uninterrupted run.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from typing import TYPE_CHECKING

from fixtures.reference import (
    assert_same,
    lm_calls_after_batch,
    reference_snapshot,
    snapshot,
    stream_documents,
    stream_scenario,
    wait_changelog_settled,
)
from fixtures.stack import Stack, StackFactory

if TYPE_CHECKING:
    from conftest import Scale

SEED = 20240917


def _processed(stack: Stack, worker: int) -> int:
    """Outcomes logged by one worker process (redeliveries included)."""
    return stack.worker_log(worker).count(" outcome ")


async def test_sigkill_at_random_points_loses_and_repeats_nothing(
    stack_factory: StackFactory, scale: Scale
) -> None:
    count = scale.pick(1000, 100)
    kills = scale.pick(20, 3)
    scenario = stream_scenario(count, seed=SEED)
    reference = await reference_snapshot(stack_factory, scenario)

    rng = random.Random(SEED)  # noqa: S311 - reproducible kill points
    # Kill when this many documents have an outcome (and the current worker did some).
    points = sorted(rng.sample(range(count // 20, count - count // 20), kills))
    # Every LM call waits a little, so a kill lands inside calls as well as between them.
    scenario.decisions.delay = {"[doc-": 0.05}
    stack = await stack_factory(scenario.decisions)
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
    await wait_changelog_settled(stack)

    edits = await stack.changelog()
    actual = await snapshot(stack, scenario)
    outcomes = Counter(
        line.split()[-1]
        for i in range(len(stack.workers))
        for line in stack.worker_log(i).splitlines()
        if " outcome " in line
    )
    print(
        f"\ncrash: {count} documents, {kills} SIGKILLs survived in {elapsed:.0f}s; "
        f"kill to first outcome of the next worker {min(downtimes):.1f}-{max(downtimes):.1f}s; "
        f"outcomes {dict(outcomes)}; {len(actual.edits)} edits {actual.ops()}, "
        f"{actual.fact_count} facts; LM requests {stack.lm_stats()['requests']}"
    )
    assert len(stack.workers) == kills + 1
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
