"""What the planner observes: volume per namespace, and where each one's latest document is."""

from __future__ import annotations

from factstream.placement.observe import Observed


def test_a_namespace_is_where_its_latest_document_went() -> None:
    observed = Observed()
    observed.add("moved", 1, at_ms=100)
    observed.add("moved", 4, at_ms=300)
    observed.add("moved", 1, at_ms=200)  # read later (another partition), written earlier
    observed.add("still", 2, at_ms=50)
    assert observed.volume == {"moved": 3, "still": 1}
    assert observed.seen_at == {"moved": 4, "still": 2}
    assert observed.partitions == {"moved": {1, 4}, "still": {2}}
