"""`factstream services check`: a round trip through each real service."""

from __future__ import annotations

from factstream.config import Settings
from factstream_lab.stack.check import run_round_trips


async def test_round_trips(settings: Settings) -> None:
    trips = await run_round_trips(settings)
    assert [t.service for t in trips] == ["kafka", "weaviate", "lm"]
    assert "offset 0" in trips[0].received
    assert "near-vector and hybrid both found" in trips[1].received
    assert trips[2].received.strip("'\"")
