"""Valid-time reads on real Weaviate: the filter runs in the server and agrees with the rule.

The cases (tests/unit/store/valid_cases.py) include instants outside the range Weaviate
compares dates in, and objects written before valid time existed, which must be found once
backfilled.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
import weaviate
from fixtures.factories import write_as_before
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from unit.store.builders import day, make_fact
from unit.store.valid_cases import (
    AS_OF,
    FACTS,
    intervals,
    list_ids,
    oracle,
    search_ids,
    write_facts,
)
from weaviate.classes.config import Configure
from weaviate.classes.query import Filter
from weaviate.classes.tenants import Tenant

from factstream.config import Settings, StoreSettings
from factstream.store.rules import valid_during
from factstream.store.schema import (
    VALID_TIME_PROPERTIES,
    collections_for,
)
from factstream.store.weaviate_store import WeaviateFactStore, _property, _valid_filter
from factstream.temporal.intervals import ValidInterval, at, since, until

A = "desk-a"


@pytest.fixture
async def store(weaviate_settings: Settings, store_prefix: str) -> AsyncIterator[WeaviateFactStore]:
    real = await WeaviateFactStore.open(
        weaviate_settings.weaviate, StoreSettings(collection_prefix=store_prefix)
    )
    yield real
    await real.close()


async def test_valid_time_reads_match_the_rule_at_the_edges(store: WeaviateFactStore) -> None:
    assert await search_ids(store, at(day(5)), namespace="nowhere") == []  # no tenant
    assert await list_ids(store, at(day(5)), namespace="nowhere") == []
    await write_facts(store)
    cases = [
        None,
        at(day(5)),
        at(day(6)),
        at(day(-30)),
        ValidInterval(day(6), day(7)),
        since(datetime(2250, 1, 1, tzinfo=UTC)),
        until(datetime(1550, 1, 1, tzinfo=UTC)),
        ValidInterval(datetime(1400, 1, 1, tzinfo=UTC), datetime(2400, 1, 1, tzinfo=UTC)),
    ]
    for valid in cases:
        assert await search_ids(store, valid) == oracle(valid), valid
        assert await list_ids(store, valid) == oracle(valid), valid
    assert await search_ids(store, at(day(1)), as_of=day(1)) == oracle(at(day(1)), day(1))
    for as_of in (day(11), day(12)):
        assert await search_ids(store, at(day(6)), as_of) == oracle(at(day(6)), as_of)
    assert await search_ids(store, ValidInterval(day(5), day(5))) == []


async def test_the_server_filter_alone_is_exact_inside_its_date_range(
    store: WeaviateFactStore,
) -> None:
    """No Python check behind it: what Weaviate returns for an in-range interval is the answer."""
    await write_facts(store)
    collection = store._facts.with_tenant(A)
    for valid in (at(day(5)), ValidInterval(day(6), day(7)), until(day(-20)), since(day(7))):
        found = await collection.query.fetch_objects(
            filters=_valid_filter(valid, None), limit=100, return_properties=["fact_id"]
        )
        expected = sorted(f.fact_id for f in FACTS if valid_during(f, valid))
        assert sorted(str(o.properties["fact_id"]) for o in found.objects) == expected, valid


@settings(
    max_examples=60,
    deadline=None,
    # The facts are written once per test; the examples only read.
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(valid=intervals(), as_of=st.sampled_from(AS_OF))
async def test_weaviate_and_the_rule_agree_on_overlap(
    store: WeaviateFactStore, valid: ValidInterval, as_of: datetime | None
) -> None:
    if A not in await store.namespaces():
        await write_facts(store)
    assert await search_ids(store, valid, as_of) == oracle(valid, as_of)
    assert await list_ids(store, valid, as_of) == oracle(valid, as_of)


# What the version before valid time did not have.
_NEW_PROPERTIES = (*VALID_TIME_PROPERTIES, "closed_at")


def _create_old_collections(client: weaviate.WeaviateClient, prefix: str) -> None:
    """The collections as the version before valid time made them."""
    names = collections_for(prefix)
    for spec in (names.facts, names.batches):
        client.collections.create(
            spec.name,
            properties=[_property(p) for p in spec.properties if p.name not in _NEW_PROPERTIES],
            vector_config=Configure.Vectors.self_provided() if spec.vectors else None,
            multi_tenancy_config=Configure.multi_tenancy(
                enabled=True, auto_tenant_creation=True, auto_tenant_activation=True
            ),
        )


async def test_objects_written_before_valid_time_are_backfilled_and_found(
    weaviate_settings: Settings, weaviate_client: weaviate.WeaviateClient, store_prefix: str
) -> None:
    """A collection and objects as the previous version wrote them: no valid_start/valid_end."""
    _create_old_collections(weaviate_client, store_prefix)
    facts = [make_fact(f"f{i}", changes=[(i, True)]) for i in range(5)]
    old = weaviate_client.collections.use(collections_for(store_prefix).facts.name)
    old.tenants.create([Tenant(name=A)])
    write_as_before(weaviate_client, store_prefix, A, facts, lacking=VALID_TIME_PROPERTIES)

    new = await WeaviateFactStore.open(
        weaviate_settings.weaviate, StoreSettings(collection_prefix=store_prefix)
    )
    try:
        config = weaviate_client.collections.use(old.name).config.get()
        assert set(_NEW_PROPERTIES) <= {p.name for p in config.properties}
        assert await search_ids(new, None) == [f"f{i}" for i in range(5)]
        # Valid from first_seen: at day 2, the facts seen by day 2 held.
        assert await search_ids(new, at(day(2))) == ["f0", "f1", "f2"]
        assert await list_ids(new, since(day(3))) == [f"f{i}" for i in range(5)]
        backfilled = old.with_tenant(A).aggregate.over_all(
            filters=Filter.by_property("valid_start").greater_or_equal(day(-1000)),
            total_count=True,
        )
        assert backfilled.total_count == 5
        assert await new.get(A, [f.fact_id for f in facts]) == {f.fact_id: f for f in facts}
    finally:
        await new.close()
