"""Valid-time cases shared by the memory store's unit tests and the Weaviate contract tests.

``FACTS`` cover every shape of interval: none (valid from first_seen), closed, open at either
end, one day wide, outside the range Weaviate compares dates in, and a fact made false.
``oracle`` is what a valid-time search must return: ``rules.valid_during`` over ``FACTS``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from hypothesis import strategies as st
from unit.store.builders import day, make_fact, stored

from factstream.store.base import FactStore, StoredFact
from factstream.store.rules import valid_during, visible
from factstream.temporal.intervals import RESOLUTION, ValidInterval
from factstream.topics.records import Fact

__all__ = [
    "AS_OF",
    "FACTS",
    "INSTANTS",
    "intervals",
    "list_ids",
    "oracle",
    "search_ids",
    "write_facts",
]

# Times of belief to read at: before and after the facts' history entries and closes.
AS_OF = [None, day(-5), day(1), day(3), day(11), day(12), day(20)]

FACTS: list[Fact] = [
    make_fact("legacy"),  # no interval: valid from first_seen (day 0)
    make_fact("closed", valid_from=day(-100), valid_to=day(10)),
    make_fact("future", changes=[(-5, True)], valid_from=day(50)),
    make_fact("past", changes=[(-5, True)], valid_to=day(-20)),
    make_fact("window", changes=[(-5, True)], valid_from=day(5), valid_to=day(6)),
    make_fact("false", changes=[(0, True), (3, False)], valid_from=day(0)),
    make_fact(
        "medieval",
        changes=[(-5, True)],
        valid_from=datetime(1500, 1, 1, tzinfo=UTC),
        valid_to=datetime(1600, 1, 1, tzinfo=UTC),
    ),
    make_fact("far", changes=[(-5, True)], valid_from=datetime(2300, 1, 1, tzinfo=UTC)),
    make_fact("precise", changes=[(-5, True)], valid_from=day(7) + RESOLUTION),
    # Valid from day 0; on day 12 we learned it had ended on day 4.
    make_fact("learned", valid_from=day(0), valid_to=day(4), closed_at=day(12)),
]

# Every end above, a microsecond either side, and instants out of Weaviate's date range.
_ENDS = [day(n) for n in (-100, -20, 0, 4, 5, 6, 7, 10, 12, 50)] + [
    datetime(1500, 1, 1, tzinfo=UTC),
    datetime(1600, 1, 1, tzinfo=UTC),
    datetime(2300, 1, 1, tzinfo=UTC),
]
INSTANTS = sorted(
    {t + d for t in _ENDS for d in (-RESOLUTION, timedelta(0), RESOLUTION)}
    | {datetime(1400, 1, 1, tzinfo=UTC), datetime(2400, 1, 1, tzinfo=UTC), day(7) + RESOLUTION}
)


@st.composite
def intervals(draw: st.DrawFn) -> ValidInterval:
    """A valid-time filter from ``INSTANTS`` (either end may be open; never empty)."""
    ends = sorted(draw(st.lists(st.sampled_from(INSTANTS), min_size=2, max_size=2, unique=True)))
    start = None if draw(st.booleans()) and draw(st.booleans()) else ends[0]
    end = None if draw(st.booleans()) and draw(st.booleans()) else ends[1]
    return ValidInterval(start, end)


def oracle(valid: ValidInterval | None, as_of: datetime | None = None) -> list[str]:
    """The ids a search with ``valid`` and ``as_of`` must find, sorted."""
    return sorted(f.fact_id for f in FACTS if visible(f, as_of) and valid_during(f, valid, as_of))


def facts_stored(vector: Sequence[float] = (1.0, 0.0, 0.0)) -> list[StoredFact]:
    return [stored(f, vector) for f in FACTS]


async def write_facts(store: FactStore, namespace: str = "desk-a") -> None:
    await store.upsert(namespace, facts_stored())


async def search_ids(
    store: FactStore,
    valid: ValidInterval | None,
    as_of: datetime | None = None,
    namespace: str = "desk-a",
) -> list[str]:
    hits = await store.search(
        namespace,
        "fact",
        [1.0, 0.0, 0.0],
        as_of=as_of,
        top_k=50,
        min_similarity=-1.0,
        alpha=1.0,
        valid=valid,
    )
    return sorted(hit.fact.fact_id for hit in hits)


async def list_ids(
    store: FactStore,
    valid: ValidInterval | None,
    as_of: datetime | None = None,
    namespace: str = "desk-a",
) -> list[str]:
    page = await store.list_facts(namespace, as_of=as_of, valid=valid, limit=100)
    return sorted(f.fact_id for f in page.facts)
