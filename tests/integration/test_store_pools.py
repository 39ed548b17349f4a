"""Pooled namespaces (FACTSTREAM_STORE_POOLS): isolation, and a ranking that is the
namespace's own, against the real Weaviate."""

from __future__ import annotations

import asyncio
import random

import pytest
import weaviate
from fixtures.factories import UniqueName
from unit.store.builders import make_fact, stored

from factstream.config import Settings, StoreSettings
from factstream.errors import StoreError
from factstream.store.base import AppliedBatch, FactCounts, StoredFact
from factstream.store.pools import pool_of
from factstream.store.schema import collections_for
from factstream.store.weaviate_store import WeaviateFactStore

DIM = 8
WORDS = [
    *("minister", "budget", "vote", "harbour", "strike", "council", "river", "bridge"),
    *("election", "court", "museum", "festival", "storm", "school", "hospital", "rail"),
    *("port", "tax", "mayor", "plan"),
]
QUERIES = ("budget vote", "harbour strike council", "the river bridge storm", "mayor")
ALPHAS = (0.0, 0.5, 0.75, 1.0)
# No floor, and one that sends Weaviate a distance cut (half the random vectors pass it).
FLOORS = (-1.0, 0.0)


async def _open(settings: Settings, prefix: str, pools: int) -> WeaviateFactStore:
    config = StoreSettings(collection_prefix=prefix, pools=pools)
    return await WeaviateFactStore.open(settings.weaviate, config)


def _vector(rng: random.Random | int) -> list[float]:
    if isinstance(rng, int):
        rng = random.Random(rng)  # noqa: S311 - test data, not secrets
    return [rng.uniform(-1, 1) for _ in range(DIM)]


def _facts(namespace: str, n: int, seed: int) -> list[StoredFact]:
    """``n`` facts of a few words each (so words repeat: BM25's IDF matters), some false."""
    rng = random.Random(seed)  # noqa: S311 - test data, not secrets
    out = []
    for i in range(n):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9)))
        changes = [(0, True), (2, False)] if i % 7 == 3 else [(0, True)]
        out.append(stored(make_fact(f"f{i:03}", text, changes, namespace=namespace), _vector(rng)))
    return out


async def _ranking(
    store: WeaviateFactStore,
    namespace: str,
    query: str,
    alpha: float,
    seed: int,
    floor: float = -1.0,
) -> list[tuple[str, float]]:
    hits = await store.search(
        namespace,
        query,
        _vector(seed),
        as_of=None,
        top_k=10,
        min_similarity=floor,
        alpha=alpha,
    )
    return [(hit.fact.fact_id, hit.score) for hit in hits]


async def test_namespaces_of_one_pool_do_not_see_each_other(
    weaviate_settings: Settings, store_prefix: str
) -> None:
    store = await _open(weaviate_settings, store_prefix, pools=1)
    try:
        a, b = "pool-a", "pool-b"
        assert pool_of(a, 1) == pool_of(b, 1)
        await store.upsert(a, _facts(a, 5, seed=1))
        await store.upsert(b, _facts(b, 3, seed=2))
        await store.record_batch(b, AppliedBatch("doc-1", "batch-1", 3))
        assert len(await store.get(a, [f"f{i:03}" for i in range(5)])) == 5
        assert set(await store.get(b, [f"f{i:03}" for i in range(5)])) == {"f000", "f001", "f002"}
        assert await store.applied_batch(a, "doc-1") is None
        for fact in (await store.list_facts(b, include_false=True)).facts:
            assert fact.namespace == b
        hits = await store.search(
            b,
            "budget",
            _vector(3),
            as_of=None,
            top_k=50,
            min_similarity=-1.0,
            alpha=0.5,
        )
        assert {hit.fact.namespace for hit in hits} == {b}
        assert await store.count_facts(b) == FactCounts(3, 0)
        assert await store.namespaces() == [a, b]
        await store.drop_namespace(a)
        assert await store.namespaces() == [b]
        assert await store.get(a, ["f000"]) == {}
        assert await store.has_namespace(b) and not await store.has_namespace(a)
    finally:
        await store.close()


async def test_a_pooled_ranking_is_its_own_and_the_tenants(
    weaviate_settings: Settings,
    store_prefix: str,
    weaviate_client: weaviate.WeaviateClient,
    unique_name: UniqueName,
) -> None:
    """A pooled namespace ranks as the same namespace in a tenant of its own does, and
    its ranking does not move when a neighbour in its pool adds facts with its words."""
    pooled_prefix = unique_name("Test")  # a store's collections keep one layout
    own = await _open(weaviate_settings, store_prefix, pools=0)
    pooled = await _open(weaviate_settings, pooled_prefix, pools=1)
    try:
        facts = _facts("ranked", 160, seed=5)
        await own.upsert("ranked", facts)
        await pooled.upsert("ranked", facts)
        cases = [
            (q, alpha, seed, floor)
            for seed, q in enumerate(QUERIES)
            for alpha in ALPHAS
            for floor in FLOORS
        ]
        alone = {case: await _ranking(pooled, "ranked", *case) for case in cases}
        for case in cases:
            tenant = await _ranking(own, "ranked", *case)
            assert [i for i, _ in alone[case]] == [i for i, _ in tenant], case
            assert [s for _, s in alone[case]] == pytest.approx([s for _, s in tenant], abs=1e-4)
        # A neighbour heavy in the queries' words: in one pool's BM25 statistics it would
        # change every word's IDF.
        noisy = _facts("neighbour", 120, seed=6)
        await pooled.upsert("neighbour", noisy)
        for case in cases:
            assert await _ranking(pooled, "ranked", *case) == alone[case], case
    finally:
        await own.close()
        await pooled.close()
        names = collections_for(pooled_prefix)
        weaviate_client.collections.delete([names.facts.name, names.batches.name])


@pytest.mark.parametrize(("made", "asked"), [(0, 4), (4, 0), (4, 5)])
async def test_a_store_refuses_another_namespace_layout_than_its_collections(
    weaviate_settings: Settings, store_prefix: str, made: int, asked: int
) -> None:
    """Opening collections made with one pool count under another would look for every
    namespace where it is not: refused, with what to set; the same count opens."""
    store = await _open(weaviate_settings, store_prefix, pools=made)
    await store.upsert("kept", _facts("kept", 2, seed=9))
    await store.close()
    with pytest.raises(StoreError, match=f"FACTSTREAM_STORE_POOLS is {asked}.*set it to {made}"):
        await _open(weaviate_settings, store_prefix, pools=asked)
    again = await _open(weaviate_settings, store_prefix, pools=made)
    try:
        assert await again.count_facts("kept") == FactCounts(2, 0)
    finally:
        await again.close()


async def test_a_pool_goes_inactive_once_all_its_namespaces_are_idle(
    weaviate_settings: Settings, store_prefix: str, weaviate_client: weaviate.WeaviateClient
) -> None:
    """The sweep deactivates a pool, not a namespace: only when none of its namespaces was
    used within the idle time; a read or write afterwards finds it as before."""
    idle_s = 1.0
    config = StoreSettings(collection_prefix=store_prefix, pools=1, tenant_idle_s=idle_s)
    store = await WeaviateFactStore.open(weaviate_settings.weaviate, config)
    facts = weaviate_client.collections.use(collections_for(store_prefix, pooled=True).facts.name)
    pool = pool_of("quiet", 1)
    try:
        for ns in ("quiet", "busy"):
            await store.upsert(ns, _facts(ns, 3, seed=8))
            await store.record_batch(ns, AppliedBatch("d1", "d1", 3))
        await asyncio.sleep(idle_s + 0.2)
        await store.count_facts("busy")  # one namespace of the pool used: the pool stays
        swept = await store.deactivate_idle(lambda ns: False)  # pools count as owned
        assert swept.deactivated == [] and swept.active == 1
        assert facts.tenants.get()[pool].activity_status.value == "ACTIVE"
        await asyncio.sleep(idle_s + 0.2)
        swept = await store.deactivate_idle(lambda ns: False, listing=False)
        assert swept.deactivated == [pool]
        assert facts.tenants.get()[pool].activity_status.value == "INACTIVE"
        assert await store.count_facts("quiet") == FactCounts(3, 0)  # back unnoticed
        assert await store.applied_batch("busy", "d1") == AppliedBatch("d1", "d1", 3)
        assert facts.tenants.get()[pool].activity_status.value == "ACTIVE"
    finally:
        await store.close()
