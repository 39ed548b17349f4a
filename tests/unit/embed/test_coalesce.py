"""Coalescer: concurrent requests merged into model calls; each caller gets its own vectors."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factstream.embed.base import Vector
from factstream.embed.child import length_groups
from factstream.embed.coalesce import Coalescer


class SlowEncoder:
    """Encodes a text as [len(text)], records each call, takes a moment per call."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.calls: list[list[str]] = []
        self.fail_on = fail_on
        self.running = 0
        self.most_running = 0

    async def __call__(self, texts: list[str]) -> list[Vector]:
        self.calls.append(texts)
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        try:
            await asyncio.sleep(0.01)
            if self.fail_on is not None and self.fail_on in texts:
                raise RuntimeError(f"cannot encode {self.fail_on!r}")
            return [[float(len(t))] for t in texts]
        finally:
            self.running -= 1


async def test_requests_made_while_a_call_runs_are_merged_into_the_next() -> None:
    encoder = SlowEncoder()
    coalescer = Coalescer(encoder, max_texts=32)
    requests = [[f"text {i}" * (i + 1)] * (1 + i % 3) for i in range(8)]
    results = await asyncio.gather(*(coalescer.submit(r) for r in requests))
    assert results == [[[float(len(t))] for t in r] for r in requests]
    # The first request goes alone; the seven made meanwhile go in one call.
    assert [len(c) for c in encoder.calls] == [1, sum(len(r) for r in requests[1:])]
    assert coalescer.calls == 2


async def test_a_call_never_exceeds_max_texts_unless_one_request_does() -> None:
    encoder = SlowEncoder()
    coalescer = Coalescer(encoder, max_texts=4)
    requests = [["a"], ["b", "c", "d"], ["e", "f"], ["g"], ["h", "i", "j", "k", "l", "m"]]
    await asyncio.gather(*(coalescer.submit(r) for r in requests))
    assert encoder.calls == [["a"], ["b", "c", "d"], ["e", "f", "g"], list("hijklm")]


async def test_in_flight_bounds_concurrent_calls() -> None:
    encoder = SlowEncoder()
    coalescer = Coalescer(encoder, max_texts=1, in_flight=2)
    await asyncio.gather(*(coalescer.submit([str(i)]) for i in range(6)))
    assert encoder.most_running == 2 and len(encoder.calls) == 6


async def test_an_encoder_error_reaches_only_the_callers_of_that_call() -> None:
    encoder = SlowEncoder(fail_on="bad")
    coalescer = Coalescer(encoder, max_texts=2)
    first = asyncio.ensure_future(coalescer.submit(["ok 1"]))
    await asyncio.sleep(0)  # the first call starts alone
    merged = [asyncio.ensure_future(coalescer.submit(t)) for t in (["bad"], ["ok 2"])]
    later = asyncio.ensure_future(coalescer.submit(["ok 3"]))
    assert await first == [[4.0]]
    for f in merged:
        with pytest.raises(RuntimeError, match="cannot encode 'bad'"):
            await f
    assert await later == [[4.0]]


async def test_a_cancelled_caller_is_dropped_and_the_others_are_served() -> None:
    encoder = SlowEncoder()
    coalescer = Coalescer(encoder, max_texts=32)
    first = asyncio.ensure_future(coalescer.submit(["first"]))
    await asyncio.sleep(0)
    gone = asyncio.ensure_future(coalescer.submit(["gone"]))
    kept = asyncio.ensure_future(coalescer.submit(["kept"]))
    await asyncio.sleep(0)
    gone.cancel()
    assert await first == [[5.0]] and await kept == [[4.0]]
    assert encoder.calls == [["first"], ["kept"]]
    await coalescer.aclose()


async def test_empty_requests_make_no_call() -> None:
    encoder = SlowEncoder()
    assert await Coalescer(encoder, max_texts=8).submit([]) == []
    assert encoder.calls == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2000), max_size=120), st.integers(1, 40))
def test_length_groups_cover_every_text_once_within_the_batch_size(
    lengths: list[int], batch_size: int
) -> None:
    groups = length_groups(lengths, batch_size)
    assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
    assert all(0 < len(g) <= batch_size for g in groups)
    # Groups are runs of the sorted lengths: no group's range overlaps the next one's.
    for a, b in zip(groups, groups[1:], strict=False):
        assert max(lengths[i] for i in a) <= min(lengths[i] for i in b)


def test_length_groups_keep_short_texts_apart_from_a_long_one() -> None:
    # Padding three short facts to an article's length costs more than a second call.
    assert length_groups([900, 60, 70, 65], batch_size=32) == [[1, 3, 2], [0]]
    # Similar lengths share one call.
    assert length_groups([60, 70, 65, 80], batch_size=32) == [[0, 2, 1, 3]]
