"""What the Weaviate store asks the server: range indexes on the times it ranges over, and
no distance cut where the similarity floor prunes nothing (issue 22: a hop's cost)."""

from __future__ import annotations

import pytest

from factstream.store.schema import FACT_PROPERTIES, PropertyType
from factstream.store.weaviate_store import _max_distance, _property

# The date properties the store filters with < or > ("true at T", valid time).
RANGED = {"history_from", "history_to", "valid_start", "valid_end", "valid_closed"}


def test_the_times_filtered_by_range_have_a_range_index() -> None:
    ranged = {p.name for p in FACT_PROPERTIES if p.ranged}
    assert ranged == RANGED
    for spec in FACT_PROPERTIES:
        prop = _property(spec)
        assert bool(prop.indexRangeFilters) == (spec.name in RANGED), spec.name
        if spec.ranged:
            assert spec.type is PropertyType.DATE and prop.indexFilterable


@pytest.mark.parametrize(
    ("floor", "alpha", "cut"),
    [(0.3, 0.75, 0.7), (0.0, 1.0, 1.0), (0.3, 0.0, None), (-1.0, 0.75, None), (-2.0, 0.5, None)],
)
def test_a_floor_that_prunes_nothing_sends_no_distance_cut(
    floor: float, alpha: float, cut: float | None
) -> None:
    got = _max_distance(floor, alpha)
    assert got == pytest.approx(cut, abs=1e-4) if cut is not None else got is None
