"""At a revocation the app holds the actors' commits instead of waiting for every event
read to be acknowledged (streams/app.py, issue 25's sixth group run)."""

from __future__ import annotations

import asyncio
import logging

from factstream.config import Settings
from factstream.streams.app import create_app


class _Consumer:
    """faust's consumer at a revocation: events read ahead, never acknowledged meanwhile."""

    def __init__(self) -> None:
        self.commits = 0

    async def wait_empty(self) -> None:  # faust's wait: until the read-ahead is committed
        await asyncio.sleep(3600)

    async def commit(self) -> bool:
        self.commits += 1
        return True


async def _revocation(stream_wait_empty: bool) -> tuple[list[str], _Consumer]:
    """What one revocation's wait does: the holds asked for, the consumer's commits."""
    settings = Settings()
    app = create_app(settings.kafka, settings.worker)
    holds: list[str] = []

    async def hold() -> None:
        holds.append("held")

    app.hold_commits = hold
    app.conf.stream_wait_empty = stream_wait_empty  # False: what the signal does (stopping)
    consumer = _Consumer()
    await asyncio.wait_for(app._consumer_wait_empty(consumer, logging.getLogger()), 5)
    return holds, consumer


async def test_a_revocation_holds_the_commits_and_commits_what_was_acknowledged() -> None:
    holds, consumer = await _revocation(stream_wait_empty=True)
    assert holds == ["held"]
    assert consumer.commits == 1


async def test_the_stop_signal_still_turns_the_wait_off() -> None:
    holds, consumer = await _revocation(stream_wait_empty=False)
    assert holds == [] and consumer.commits == 0
