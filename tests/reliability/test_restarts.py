"""Service restarts mid-stream on servers of the test's own (issue 9.2).

Kafka broker restarted; Weaviate restarted; Weaviate's data wiped and rebuilt with
`factstream rebuild`. Each time the knowledge base ends equal to an uninterrupted run's,
and the worker carries on by itself (the same process, never restarted by the test).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING

from fixtures.instances import InstanceFactory, PrivateInstance
from fixtures.reference import (
    Scenario,
    assert_same,
    reference_snapshot,
    snapshot,
    stream_scenario,
    wait_changelog_settled,
)
from fixtures.stack import Stack, StackFactory

if TYPE_CHECKING:
    from conftest import Scale

SEED = 7


def _scenario(scale: Scale) -> Scenario:
    return stream_scenario(scale.pick(300, 60), seed=SEED)


async def _restart_mid_stream(
    stack: Stack,
    scenario: Scenario,
    server: PrivateInstance,
    *,
    restarts: int,
    kill: bool = False,
    down_s: float = 3.0,
) -> list[float]:
    """Stream the documents in ``restarts + 1`` parts; restart ``server`` while the worker
    works through each part but the last. Returns the seconds the server was down."""
    docs, parts = scenario.documents, restarts + 1
    cuts = [len(docs) * i // parts for i in range(parts + 1)]
    down = []
    for part in range(parts):
        await stack.publish(docs[cuts[part] : cuts[part + 1]])
        if part == restarts:
            break
        # Mid-part: some of its documents done, the rest waiting or being edited.
        await stack.wait_outcomes(cuts[part] + (cuts[part + 1] - cuts[part]) // 3, timeout_s=600)
        down.append(
            await asyncio.to_thread(server.restart, kill=kill and part % 2 == 1, down_s=down_s)
        )
        await stack.wait_outcomes(cuts[part + 1], timeout_s=600)
    await stack.wait_outcomes(len(docs), timeout_s=900)
    return down


async def _survives_restarts(
    stack_factory: StackFactory, scale: Scale, server: PrivateInstance, *, kill: bool
) -> None:
    """The worker streams the scenario while ``server`` restarts under it."""
    scenario = _scenario(scale)
    reference = await reference_snapshot(stack_factory, scenario)
    stack = await stack_factory(scenario.decisions, **server.env)
    worker = stack.start_worker()
    began = time.monotonic()
    restarts = scale.pick(3, 1)
    down = await _restart_mid_stream(stack, scenario, server, restarts=restarts, kill=kill)
    elapsed = time.monotonic() - began
    await wait_changelog_settled(stack)
    actual = await snapshot(stack, scenario)
    print(
        f"\n{server.service.name} restart: {len(scenario.documents)} documents, "
        f"{server.restarts} restarts (down {', '.join(f'{d:.0f}' for d in down)} s), "
        f"{elapsed:.0f}s in all"
    )
    assert worker.poll() is None and len(stack.workers) == 1  # it carried on by itself
    assert server.restarts == restarts
    assert_same(actual, reference)


async def test_kafka_broker_restart_mid_stream(
    private_kafka: InstanceFactory, stack_factory: StackFactory, scale: Scale
) -> None:
    kafka = await asyncio.to_thread(private_kafka)
    await _survives_restarts(stack_factory, scale, kafka, kill=False)


async def test_weaviate_restart_mid_stream(
    private_weaviate: InstanceFactory, stack_factory: StackFactory, scale: Scale
) -> None:
    weaviate = await asyncio.to_thread(private_weaviate)
    # Full size: graceful, SIGKILL, graceful; reduced: one graceful restart.
    await _survives_restarts(stack_factory, scale, weaviate, kill=True)


def _rebuild(stack: Stack) -> str:
    run = subprocess.run(
        [sys.executable, "-m", "factstream", "rebuild", "--all"],
        env={**os.environ, **stack.env},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


async def test_weaviate_data_wiped_then_rebuilt(
    private_weaviate: InstanceFactory, stack_factory: StackFactory, scale: Scale
) -> None:
    scenario = _scenario(scale)
    reference = await reference_snapshot(stack_factory, scenario)
    weaviate = await asyncio.to_thread(private_weaviate)
    stack = await stack_factory(scenario.decisions, **weaviate.env)
    docs = scenario.documents
    half = len(docs) // 2
    stack.start_worker()
    await stack.publish(docs[:half])
    await stack.wait_outcomes(half, timeout_s=600)
    before = await snapshot(stack, scenario)

    # The disk is lost: the operator stops the worker, Weaviate comes back empty, and
    # `factstream rebuild` restores it from the changelog.
    stack.kill_worker(stack.workers[0], signal.SIGTERM)
    await asyncio.to_thread(weaviate.stop)
    weaviate.wipe()
    await asyncio.to_thread(weaviate.start)
    assert (await snapshot(stack, scenario)).fact_count == 0
    began = time.monotonic()
    out = _rebuild(stack)
    rebuilt_s = time.monotonic() - began
    rebuilt = await snapshot(stack, scenario)
    assert rebuilt == before, "the rebuilt knowledge base differs from the one lost"

    # The worker goes on from where it stopped, against the rebuilt knowledge base.
    stack.start_worker()
    await stack.publish(docs[half:])
    await stack.wait_outcomes(len(docs), timeout_s=900)
    actual = await snapshot(stack, scenario)
    print(
        f"\nweaviate wiped: {before.fact_count} facts of {half} documents rebuilt in "
        f"{rebuilt_s:.0f}s ({out.strip().splitlines()[-1]}); then {len(docs) - half} more"
    )
    assert_same(actual, reference)
