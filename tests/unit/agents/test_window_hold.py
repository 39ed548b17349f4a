"""A rebalance holds a window's commits (issue 25): it lasts about one commit, not the LM
calls of the documents read ahead, and those commit after it as they would without it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence

import pytest
from unit.agents.test_window import Run, conflicting

from factstream.agents.dependencies import Policy
from factstream.agents.editor import Outcome
from factstream.topics.records import Fact, FactEdit

LM_CALL_S = 0.5


async def _until(condition: Callable[[], bool]) -> None:
    while not condition():
        await asyncio.sleep(0.005)


async def _serial(values: list[bytes], run: Run) -> list[tuple[int, Outcome]]:
    serial = Run(run.lm.decisions, 1)
    await serial.feed(list(values))
    assert serial.publisher.comparable() == run.publisher.comparable()
    return serial.outcomes


@pytest.mark.parametrize("dependencies", [None, "wait"])
async def test_a_hold_does_not_wait_for_the_documents_read_ahead(
    dependencies: Policy | None,
) -> None:
    values, decisions = conflicting(12)
    run = Run(decisions, 4, dependencies=dependencies)
    run.lm.delay = LM_CALL_S  # each document read ahead needs two calls of 0.5 s
    feeding = asyncio.create_task(run.feed(list(values)))
    await _until(lambda: len(run.outcomes) >= 2)
    loop = asyncio.get_running_loop()
    start = loop.time()
    await run.window.hold()
    assert loop.time() - start < LM_CALL_S / 2  # the old wait: every document read, ~6 s
    held = len(run.outcomes)
    assert held < len(values)  # documents read and not committed are left in flight
    await asyncio.sleep(3 * LM_CALL_S)  # no commit while held; the decisions go on
    assert len(run.outcomes) == held
    run.window.resume()
    await feeding
    assert run.outcomes == await _serial(values, run)
    assert run.outcomes == [(i, Outcome.APPLIED) for i in range(12)]


async def test_a_commit_writing_when_held_finishes_and_is_acknowledged_first() -> None:
    values, decisions = conflicting(6)
    run = Run(decisions, 4)
    publish, writing = run.publisher.publish_batch, asyncio.Event()

    async def slow_publish(edits: Sequence[FactEdit], facts: Sequence[Fact] = ()) -> None:
        writing.set()
        await asyncio.sleep(0.3)
        await publish(edits, facts)

    run.publisher.publish_batch = slow_publish  # type: ignore[method-assign]
    feeding = asyncio.create_task(run.feed(list(values)))
    await writing.wait()
    before = len(run.outcomes)
    await run.window.hold()
    assert len(run.outcomes) == len(run.publisher.batches) == before + 1
    run.window.resume()
    await feeding
    assert run.outcomes == await _serial(values, run)


async def test_records_read_again_after_a_rebalance_are_skipped() -> None:
    values, decisions = conflicting(10)
    run = Run(decisions, 4)
    run.values = list(values)

    async def events() -> AsyncIterator[int]:
        for offset in [*range(6), *range(3, 10)]:  # faust sought back to offset 3
            yield offset

    await asyncio.wait_for(run.window.run(events(), run.record, run.committed), 60)
    assert run.outcomes == await _serial(values, run)
    assert [offset for offset, _ in run.outcomes] == list(range(10))


async def test_a_hold_returns_when_the_stop_cancels_the_commit_writing() -> None:
    values, decisions = conflicting(6)
    run = Run(decisions, 4)
    writing = asyncio.Event()

    async def stuck_publish(edits: Sequence[FactEdit], facts: Sequence[Fact] = ()) -> None:
        writing.set()
        await asyncio.sleep(3600)

    run.publisher.publish_batch = stuck_publish  # type: ignore[method-assign]
    feeding = asyncio.create_task(run.feed(list(values)))
    await writing.wait()
    holding = asyncio.create_task(run.window.hold())  # waits for the write to finish
    await asyncio.sleep(0.2)
    assert not holding.done()
    feeding.cancel()  # the stop signal cancels the actor (agents/stopping.py)
    await asyncio.wait_for(holding, 5)
    assert run.outcomes == []


async def test_a_record_delivered_out_of_order_is_still_edited() -> None:
    values, decisions = conflicting(10)
    run = Run(decisions, 4)
    run.values = list(values)

    async def events() -> AsyncIterator[int]:
        for offset in [*range(6, 10), *range(10)]:  # 6-9 came before the seek back to 0
            yield offset

    await asyncio.wait_for(run.window.run(events(), run.record, run.committed), 60)
    assert sorted({offset for offset, _ in run.outcomes}) == list(range(10))  # none lost
