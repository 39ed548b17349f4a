"""A worker's stop (SIGTERM): no new document, a bounded exit, even while its group rebalances
(issue 25's third full-size group run: a worker SIGTERMed ~5 s after another was SIGKILLed
kept editing 98 documents over 28 s, joined the next generation and never exited).

The documents are many and the LM slow, so that each worker has read far ahead of what it
has committed when the signal comes (a window and an embedding batch per partition): the
old stop committed all of that first.
"""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import time
from typing import TYPE_CHECKING

from fixtures.reference import lm_calls_after_batch, stream_scenario
from fixtures.stack import Stack, StackFactory

if TYPE_CHECKING:
    from conftest import Figures

_PARTITIONS = 4
_ENV = {"FACTSTREAM_WORKER_PARTITIONS": str(_PARTITIONS)}
# The stop is a matter of seconds: cancel the actors, commit, leave the group, close the
# clients; generous on a loaded two-core machine, far under the old stop's tens of seconds.
_STOP_BOUND_S = 15.0
_GENERATION = re.compile(r"Joined group '[^']+' \(generation (\d+)\)")
# aiokafka's line as a rebalance begins, before faust's revocation.
_REVOKING = "Revoking previously assigned partitions"


async def _stop(stack: Stack, worker: int) -> tuple[float, int]:
    """SIGTERM worker ``worker``: seconds until it exited, outcomes it logged after the signal."""
    proc = stack.workers[worker]
    before = len(stack.worker_log(worker))
    began = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        await asyncio.to_thread(proc.wait, 60)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(
            f"worker {worker} still running 60 s after SIGTERM:\n"
            + stack.worker_log(worker)[-3000:]
        ) from None
    return time.monotonic() - began, stack.worker_log(worker)[before:].count(" outcome ")


async def _stopped_in_bounds(stack: Stack, figures: Figures, name: str, when: str) -> None:
    """SIGTERM worker 0: it exits with status 0 in bounded time, taking no new document."""
    seconds, after = await _stop(stack, 0)
    status = stack.workers[0].returncode
    figures.record(
        name,
        f"SIGTERM {when}: exit {status} after {seconds:.1f}s, {after} outcomes after the signal",
        seconds=round(seconds, 1),
        outcomes_after=after,
        status=status,
    )
    assert status == 0, stack.worker_log(0)[-3000:]
    assert seconds < _STOP_BOUND_S
    assert after <= _PARTITIONS  # at most a commit under way per partition


async def _editing(stack: Stack, workers: list[int], each: int) -> None:
    async def busy() -> bool:
        return all(stack.worker_log(i).count(" outcome ") >= each for i in workers)

    await stack.wait_for(busy, f"workers {workers} editing", timeout_s=300)


async def _finish(stack: Stack, count: int) -> None:
    """A fresh worker edits the rest; nothing stopped reaches the LM again once published."""
    stack.start_worker()
    await stack.wait_outcomes(count, timeout_s=600)
    assert lm_calls_after_batch(stack, await stack.changelog()) == {}


async def test_a_stopped_worker_takes_no_new_document(
    stack_factory: StackFactory, figures: Figures
) -> None:
    scenario = stream_scenario(48, seed=27, shops=8)
    scenario.decisions.delay = {"[doc-": 0.5}  # it reads far ahead of what it commits
    stack = await stack_factory(scenario.decisions, **_ENV)
    stack.start_worker()
    await stack.publish(scenario.documents)
    await _editing(stack, [0], each=4)
    left = len(scenario.documents) - len(stack.outcomes())
    await _stopped_in_bounds(stack, figures, "worker_stop", f"{left} of 48 documents left")
    await _finish(stack, len(scenario.documents))


async def test_a_worker_stopped_as_its_group_rebalances_exits(
    stack_factory: StackFactory, figures: Figures
) -> None:
    """The third full-size group run's moment: of two workers in one generation, one is
    SIGKILLed; at its session timeout (6 s) the other begins the rebalance (faust waits
    there until every event it has read is acknowledged: its read-ahead, edited at the
    LM's pace) and is SIGTERMed then."""
    scenario = stream_scenario(64, seed=28, shops=8)
    scenario.decisions.delay = {"[doc-": 0.5}
    stack = await stack_factory(scenario.decisions, **_ENV)
    stack.start_worker()
    stack.start_worker()

    async def one_generation() -> bool:  # both joined it: each owns partitions
        joined = [_GENERATION.findall(stack.worker_log(i)) for i in (0, 1)]
        return all(joined) and joined[0][-1] == joined[1][-1]

    await stack.wait_for(one_generation, "both workers in one generation", timeout_s=120)
    await stack.publish(scenario.documents)
    await _editing(stack, [0, 1], each=2)
    seen = len(stack.worker_log(0))
    await asyncio.to_thread(stack.kill_worker, stack.workers[1], signal.SIGKILL)

    async def rebalancing() -> bool:
        return _REVOKING in stack.worker_log(0)[seen:]

    await stack.wait_for(rebalancing, "the survivor's rebalance", timeout_s=60)
    await _stopped_in_bounds(stack, figures, "worker_stop_in_rebalance", "as it rebalances")
    await _finish(stack, len(scenario.documents))
