"""LM outage: the LM server stopped mid-stream, then started again (issue 9.3).

The server is the test's own stub (never the shared llama.cpp server). While it is down,
progress stops; nothing is skipped or dead-lettered; when it is back the same worker goes on
by itself, and the knowledge base ends equal to an uninterrupted run's.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from fixtures.reference import (
    assert_same,
    reference_snapshot,
    snapshot,
    stream_scenario,
)
from fixtures.stack import StackFactory

if TYPE_CHECKING:
    from conftest import Figures, Scale, WindowEnv

SEED = 7  # the scenario of test_restarts.py: one reference serves both


async def test_lm_server_stopped_mid_stream(
    stack_factory: StackFactory, scale: Scale, figures: Figures, window_env: WindowEnv
) -> None:
    scenario = stream_scenario(scale.pick(300, 48), seed=SEED)
    outage_s = scale.pick(60, 10)
    reference = await reference_snapshot(stack_factory, scenario)
    stack = await stack_factory(scenario.decisions, **window_env.env)
    worker = stack.start_worker()
    count = len(scenario.documents)
    began = time.monotonic()
    await stack.publish(scenario.documents)
    await stack.wait_outcomes(count // 3, timeout_s=600)

    assert stack.stub is not None
    stack.stub.terminate()  # the LM server goes away mid-stream
    stack.stub.wait(timeout=30)
    stopped_at = len(stack.outcomes())
    await asyncio.sleep(outage_s)
    during = len(stack.outcomes()) - stopped_at
    assert worker.poll() is None, "the worker died during the LM outage"
    # Documents in flight may finish (their LM calls were answered); nothing else moves:
    # at most a window of them in each of the stack's 4 partitions.
    in_flight = 4 * window_env.size
    assert during <= in_flight, f"{during} documents had an outcome without an LM"
    assert "dead_letter" not in stack.outcomes().values()

    stack.start_stub()  # back on the same port
    back = time.monotonic()

    async def moving() -> bool:
        return len(stack.outcomes()) > stopped_at + during

    await stack.wait_for(moving, "progress after the LM came back", timeout_s=300)
    resumed_s = time.monotonic() - back
    await stack.wait_outcomes(count, timeout_s=900)
    elapsed = time.monotonic() - began
    actual = await snapshot(stack, scenario)
    figures.record(
        window_env.name("lm_outage"),
        f"{count} documents, LM down {outage_s}s after {stopped_at}; "
        f"{during} finished during it; first outcome {resumed_s:.1f}s after it came back; "
        f"{elapsed:.0f}s in all",
        documents=count,
        outage_s=outage_s,
        finished_during=during,
        resumed_s=round(resumed_s, 1),
        seconds=round(elapsed, 1),
    )
    assert worker.poll() is None and len(stack.workers) == 1  # it went on by itself
    assert set(stack.outcomes().values()) == {"applied"}
    stack.assert_committed_in_order()
    assert_same(actual, reference)
