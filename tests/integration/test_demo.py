"""The demo's round trips work against the real stack (what `make demo` prints)."""

from __future__ import annotations

from factstream.config import Settings
from factstream.demo import run_round_trips


async def test_demo_round_trips(settings: Settings) -> None:
    trips = await run_round_trips(settings)
    assert [t.service for t in trips] == ["kafka", "weaviate", "lm"]
    assert "offset 0" in trips[0].received
    assert "near-vector and hybrid both found" in trips[1].received
    assert trips[2].received.strip("'\"")
