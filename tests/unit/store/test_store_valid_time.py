"""Valid-time reads on the in-memory store (the same cases run on Weaviate in integration)."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st
from unit.store.builders import day, make_fact
from unit.store.valid_cases import AS_OF, intervals, list_ids, oracle, search_ids, write_facts

from factstream.store.memory import InMemoryFactStore
from factstream.store.schema import DATE_MAX, DATE_MIN, fact_properties, valid_time_properties
from factstream.temporal.intervals import ValidInterval, at, since, until


async def test_valid_at_an_instant_finds_the_facts_that_held_then() -> None:
    store = InMemoryFactStore()
    await write_facts(store)
    assert await search_ids(store, None) == oracle(None)
    assert "false" not in oracle(None) and "legacy" in oracle(None)
    assert await search_ids(store, at(day(5))) == ["closed", "legacy", "window"]
    assert await search_ids(store, at(day(6))) == ["closed", "legacy"]  # the end is exclusive
    assert await search_ids(store, at(day(-30))) == ["closed", "past"]
    assert await search_ids(store, at(day(60))) == ["future", "legacy", "precise"]


async def test_valid_between_finds_every_overlap_and_as_of_still_applies() -> None:
    store = InMemoryFactStore()
    await write_facts(store)
    assert await search_ids(store, ValidInterval(day(6), day(7))) == ["closed", "legacy"]
    assert await search_ids(store, since(datetime(2250, 1, 1, tzinfo=UTC))) == [
        "far",
        "future",
        "legacy",
        "precise",
    ]
    assert await search_ids(store, until(datetime(1550, 1, 1, tzinfo=UTC))) == ["medieval", "past"]
    # What we believed at day 1 about day 1: "false" was still true then.
    assert await search_ids(store, at(day(1)), as_of=day(1)) == [
        "closed",
        "false",
        "learned",
        "legacy",
    ]
    assert await list_ids(store, at(day(1)), as_of=day(1)) == [
        "closed",
        "false",
        "learned",
        "legacy",
    ]


async def test_an_empty_interval_finds_nothing() -> None:
    store = InMemoryFactStore()
    await write_facts(store)
    assert await search_ids(store, ValidInterval(day(5), day(5))) == []
    assert await list_ids(store, ValidInterval(day(5), day(5))) == []


async def test_an_end_learned_later_is_open_as_of_before() -> None:
    store = InMemoryFactStore()
    await write_facts(store)
    assert "learned" not in await search_ids(store, at(day(6)))
    assert "learned" not in await search_ids(store, at(day(6)), as_of=day(12))
    assert "learned" in await search_ids(store, at(day(6)), as_of=day(11))
    assert "learned" in await list_ids(store, since(day(30)), as_of=day(11))


@given(valid=intervals(), as_of=st.sampled_from(AS_OF))
async def test_search_and_listing_agree_with_the_overlap_rule(
    valid: ValidInterval, as_of: datetime | None
) -> None:
    store = InMemoryFactStore()
    await write_facts(store)
    assert await search_ids(store, valid, as_of) == oracle(valid, as_of)
    assert await list_ids(store, valid, as_of) == oracle(valid, as_of)


def test_the_stored_interval_is_clamped_into_weaviates_date_range() -> None:
    legacy = make_fact("f", changes=[(3, True)])
    assert valid_time_properties(legacy) == {
        "valid_start": day(3),
        "valid_end": DATE_MAX,
        "valid_closed": DATE_MIN,
    }
    past = make_fact("f", valid_to=day(1), closed_at=day(2))
    assert valid_time_properties(past) == {
        "valid_start": DATE_MIN,
        "valid_end": day(1),
        "valid_closed": day(2),
    }
    ancient = make_fact(
        "f",
        valid_from=datetime(1066, 10, 14, tzinfo=UTC),
        valid_to=datetime(2300, 1, 1, tzinfo=UTC),
    )
    assert valid_time_properties(ancient) == {
        "valid_start": DATE_MIN,
        "valid_end": DATE_MAX,
        "valid_closed": DATE_MIN,
    }
    assert set(valid_time_properties(legacy)) <= set(fact_properties(legacy))
