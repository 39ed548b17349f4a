"""The FactStore contract, run over the in-memory double and the real Weaviate store alike."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator

import pytest
import weaviate
from fixtures.factories import write_as_before
from unit.store.builders import day, make_fact, stored

from factstream.config import Settings, StoreSettings
from factstream.errors import StoreError, StoreUnavailable, StoreWriteFailed
from factstream.store.base import AppliedBatch, FactCounts, FactStore, WordCounting
from factstream.store.memory import InMemoryFactStore
from factstream.store.rules import order_key
from factstream.store.weaviate_store import WeaviateFactStore

A, B = "desk-a", "desk-b"
# Small write batches, so the tests' upserts span several.
BATCH = 7


# Pools for the pooled store: A and B share one (store/pools.py), so isolation is tested.
POOLS = 1


async def _open(settings: Settings, prefix: str, pools: int = 0) -> WeaviateFactStore:
    config = StoreSettings(collection_prefix=prefix, write_batch_size=BATCH, pools=pools)
    return await WeaviateFactStore.open(settings.weaviate, config)


@pytest.fixture(params=["memory", "weaviate", "weaviate-pooled"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[FactStore]:
    """Each contract test runs once per implementation (Weaviate: a tenant per namespace,
    and namespaces pooled)."""
    if request.param == "memory":
        yield InMemoryFactStore()
        return
    prefix = request.getfixturevalue("store_prefix")
    pools = POOLS if request.param == "weaviate-pooled" else 0
    real = await _open(request.getfixturevalue("weaviate_settings"), prefix, pools)
    yield real
    await real.close()


def _unit(degrees: float, scale: float = 1.0) -> list[float]:
    """A 3-d vector at ``degrees`` from (1, 0, 0) in the x-y plane, of length ``scale``."""
    rad = math.radians(degrees)
    return [scale * math.cos(rad), scale * math.sin(rad), 0.0]


async def _search(store: FactStore, namespace: str = A, **kwargs: object) -> list[str]:
    args: dict[str, object] = {
        "query": "",
        "vector": _unit(0),
        "as_of": None,
        "top_k": 10,
        "min_similarity": -1.0,
        "alpha": 1.0,
    }
    hits = await store.search(namespace, **(args | kwargs))  # type: ignore[arg-type]
    return [hit.fact.fact_id for hit in hits]


async def _all(store: FactStore, namespace: str = A, **kwargs: object) -> list[str]:
    """Every fact id of a listing, page by page (3 a page)."""
    ids: list[str] = []
    cursor = None
    while True:
        page = await store.list_facts(namespace, limit=3, cursor=cursor, **kwargs)  # type: ignore[arg-type]
        ids += [fact.fact_id for fact in page.facts]
        if page.cursor is None:
            return ids
        cursor = page.cursor


async def test_namespace_is_created_on_first_write(store: FactStore) -> None:
    assert A not in await store.namespaces()
    assert await _search(store) == []
    assert (await store.list_facts(A)).facts == []
    assert await store.get(A, ["f1"]) == {}
    assert await store.applied_batch(A, "doc-1") is None
    await store.upsert(A, [stored(make_fact("f1"))])
    assert A in await store.namespaces()
    assert await _search(store) == ["f1"]


async def test_namespaces_are_isolated(store: FactStore) -> None:
    await store.upsert(A, [stored(make_fact("f1", "Paris is the capital of France"))])
    await store.upsert(B, [stored(make_fact("f1", "Rome is in Italy", namespace=B))])
    await store.upsert(B, [stored(make_fact("f2", "Paris hosts the Olympics", namespace=B))])
    assert (await store.get(A, ["f1", "f2"]))["f1"].text == "Paris is the capital of France"
    assert set(await store.get(A, ["f1", "f2"])) == {"f1"}
    assert await _search(store, A, query="Paris", alpha=0.0) == ["f1"]
    assert await _all(store, B) == ["f1", "f2"]
    assert (await store.get(B, ["f1"]))["f1"].namespace == B


async def test_upsert_replaces_by_fact_id(store: FactStore) -> None:
    await store.upsert(A, [stored(make_fact("f1", "old text"))])
    newer = make_fact("f1", "new text", [(0, True), (3, False)])
    await store.upsert(A, [stored(newer, _unit(10))])
    assert await _all(store, include_false=True) == ["f1"]
    assert (await store.get(A, ["f1"]))["f1"] == newer
    assert await _search(store) == []
    assert await _search(store, as_of=day(1)) == ["f1"]


async def test_get_returns_the_existing_ids_only(store: FactStore) -> None:
    facts = [make_fact(f"f{i}", extra_text) for i, extra_text in enumerate(["a", "b", "c"])]
    await store.upsert(A, [stored(fact) for fact in facts])
    found = await store.get(A, ["f0", "f2", "missing", "f2"])
    assert found == {"f0": facts[0], "f2": facts[2]}


async def test_get_stored_returns_the_vectors_written(store: FactStore) -> None:
    facts = [make_fact(f"f{i}", text) for i, text in enumerate(["a", "b"])]
    await store.upsert(A, [stored(facts[0], _unit(0)), stored(facts[1], _unit(90))])
    found = await store.get_stored(A, ["f1", "missing", "f0"])
    assert sorted(found) == ["f0", "f1"]
    assert found["f1"].fact == facts[1] and found["f0"].fact == facts[0]
    assert list(found["f0"].vector) == pytest.approx(_unit(0), abs=1e-6)
    assert list(found["f1"].vector) == pytest.approx(_unit(90), abs=1e-6)


async def test_fact_written_with_every_field_reads_back_equal(store: FactStore) -> None:
    fact = make_fact(
        "f1",
        "Mike Lawler represents New York",
        [(0, True), (2.5, False), (7, True)],
        subject="Mike Lawler",
        relation="represents",
        object="New York",
        object_type="place",
        valid_from=day(-300),
        valid_to=day(300),
        replaces="f0",
    )
    await store.upsert(A, [stored(fact)])
    assert (await store.get(A, ["f1"]))["f1"].to_bytes() == fact.to_bytes()


async def test_truth_at_time_follows_the_history(store: FactStore) -> None:
    await store.upsert(
        A,
        [
            stored(make_fact("invalidated", changes=[(0, True), (10, False)]), _unit(5)),
            stored(make_fact("late", changes=[(20, True)]), _unit(10)),
            stored(make_fact("back", changes=[(0, True), (5, False), (10, True)]), _unit(15)),
            stored(make_fact("always"), _unit(20)),
        ],
    )
    expected = {
        day(-1): [],
        day(0): ["invalidated", "back", "always"],
        day(3): ["invalidated", "back", "always"],
        day(7): ["invalidated", "always"],
        day(10): ["back", "always"],
        day(25): ["late", "back", "always"],
        None: ["late", "back", "always"],
    }
    for when, ids in expected.items():
        assert await _search(store, as_of=when) == ids, when
        assert sorted(await _all(store, as_of=when)) == sorted(ids), when


async def test_listing_with_false_facts_shows_what_was_known(store: FactStore) -> None:
    await store.upsert(
        A,
        [
            stored(make_fact("invalidated", changes=[(0, True), (10, False)])),
            stored(make_fact("late", changes=[(20, True)])),
        ],
    )
    assert await _all(store, include_false=True) == ["invalidated", "late"]
    assert await _all(store, include_false=True, as_of=day(15)) == ["invalidated"]
    assert await _all(store, as_of=day(15)) == []


async def test_similarity_floor_uses_the_true_cosine(store: FactStore) -> None:
    # Unnormalised vectors: the similarity must still be the cosine.
    await store.upsert(
        A,
        [
            stored(make_fact("near", "alpha"), _unit(20, scale=3.0)),
            stored(make_fact("far", "alpha"), _unit(60, scale=0.2)),
            stored(make_fact("edge", "alpha"), _unit(45, scale=7.0)),
        ],
    )
    query = _unit(0, scale=2.5)
    for alpha in (0.0, 0.5, 1.0):
        hits = await store.search(
            A, "alpha", query, as_of=None, top_k=10, min_similarity=0.7, alpha=alpha
        )
        assert {hit.fact.fact_id for hit in hits} == {"near", "edge"}, alpha
        for hit in hits:
            degrees = {"near": 20, "edge": 45}[hit.fact.fact_id]
            assert hit.similarity == pytest.approx(math.cos(math.radians(degrees)), abs=1e-4)
        assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)


async def test_top_k_survives_the_exact_truth_check(store: FactStore) -> None:
    # 30 facts that the prefilter keeps (true now) but that were false at day 5, all nearer
    # to the query than the 4 facts true at day 5.
    false_then = [
        stored(make_fact(f"gap{i:02}", changes=[(0, True), (3, False), (10, True)]), _unit(i / 10))
        for i in range(30)
    ]
    true_then = [stored(make_fact(f"true{i}"), _unit(30 + i)) for i in range(4)]
    await store.upsert(A, false_then + true_then)
    assert await _search(store, as_of=day(5), top_k=3) == ["true0", "true1", "true2"]
    assert len(await _search(store, as_of=day(12), top_k=3)) == 3
    assert await _search(store, as_of=day(5), top_k=10) == [f"true{i}" for i in range(4)]


async def test_keyword_only_search_finds_a_keyword_match(store: FactStore) -> None:
    await store.upsert(
        A,
        [
            stored(
                make_fact("queen", "The Queen will address the nation on Christmas Day"), _unit(90)
            ),
            stored(make_fact("rocket", "The rocket launch was postponed by high winds"), _unit(0)),
        ],
    )
    keyword = await _search(store, query="Queen Christmas", alpha=0.0)
    assert keyword[:1] == ["queen"]
    assert "rocket" not in keyword
    assert (await _search(store, query="Queen Christmas", alpha=1.0))[:1] == ["rocket"]
    # The floor holds for keyword matches too: the Queen's fact is orthogonal to the query.
    assert await _search(store, query="Queen Christmas", alpha=0.0, min_similarity=0.5) == []


async def test_paging_lists_every_fact_once_in_id_order(store: FactStore) -> None:
    ids = ["B", "a", "ab", "a b", "c-1", "c", "é", "z"] + [f"id{i:02}" for i in range(17)]
    false_ids = {"ab", "id03", "id04", "é"}
    await store.upsert(
        A,
        [
            stored(make_fact(i, changes=[(0, True), (1, False)] if i in false_ids else [(0, True)]))
            for i in ids
        ],
    )
    by_bytes = sorted(ids, key=str.encode)
    assert await _all(store, include_false=True) == by_bytes
    assert await _all(store) == [i for i in by_bytes if i not in false_ids]
    page = await store.list_facts(A, limit=len(ids), include_false=True)
    assert page.cursor is None and len(page.facts) == len(ids)
    rest = await store.list_facts(A, cursor=order_key("id10"), include_false=True, limit=100)
    assert [fact.fact_id for fact in rest.facts] == [i for i in by_bytes if i.encode() > b"id10"]


async def test_applied_batch_round_trip_first_wins(store: FactStore) -> None:
    first = AppliedBatch("doc-1", "batch-1", 3)
    await store.record_batch(A, first)
    await store.record_batch(A, AppliedBatch("doc-1", "batch-2", 5))
    assert await store.applied_batch(A, "doc-1") == first
    assert await store.applied_batch(A, "doc-2") is None
    assert await store.applied_batch(B, "doc-1") is None


async def test_counts_follow_the_latest_truth_per_namespace(store: FactStore) -> None:
    assert await store.count_facts(A) == FactCounts(0, 0)  # no tenant yet
    await store.upsert(
        A,
        [
            stored(make_fact("f1")),
            stored(make_fact("f2")),
            stored(make_fact("gone", changes=[(0, True), (10, False)])),
        ],
    )
    await store.upsert(B, [stored(make_fact("f1", namespace=B, changes=[(0, False)]))])
    assert await store.count_facts(A) == FactCounts(2, 1)
    assert await store.count_facts(B) == FactCounts(0, 1)
    await store.upsert(A, [stored(make_fact("f1", changes=[(0, True), (5, False)]))])
    assert await store.count_facts(A) == FactCounts(1, 2)
    await store.drop_namespace(A)
    assert await store.count_facts(A) == FactCounts(0, 0)


async def test_common_words_are_in_more_than_half_of_the_true_facts(store: FactStore) -> None:
    assert isinstance(store, WordCounting)
    assert await store.common_words(A, ["melanie"], as_of=None) == frozenset()  # no tenant
    texts = {
        "f1": "Melanie: the pets nap",
        "f2": "Melanie: we went camping",
        "f3": "Caroline: hello Melanie, camping again?",
        "f4": "Caroline: I paint",
    }
    await store.upsert(A, [stored(make_fact(i, t)) for i, t in texts.items()])
    asked = ["Melanie", "camping", "pets", "caroline", "absent"]
    # melanie: 3 of 4; camping and caroline: 2 of 4, not more than half.
    assert await store.common_words(A, asked, as_of=None) == {"melanie"}
    gone = make_fact("f4", texts["f4"], changes=[(0, True), (10, False)])
    await store.upsert(A, [stored(gone)])
    # Of the 3 true now, camping is in 2; as of day 5 f4 was still true.
    assert await store.common_words(A, asked, as_of=None) == {"melanie", "camping"}
    assert await store.common_words(A, asked, as_of=day(5)) == {"melanie"}


async def test_drop_namespace_removes_facts_and_batches(store: FactStore) -> None:
    await store.upsert(A, [stored(make_fact("f1"))])
    await store.upsert(B, [stored(make_fact("f1", namespace=B))])
    await store.record_batch(A, AppliedBatch("doc-1", "batch-1", 1))
    await store.drop_namespace(A)
    await store.drop_namespace("never-used")
    assert await store.namespaces() == [B]
    assert await store.get(A, ["f1"]) == {}
    assert await _search(store) == []
    assert await store.applied_batch(A, "doc-1") is None
    assert set(await store.get(B, ["f1"])) == {"f1"}
    await store.upsert(A, [stored(make_fact("f2"))])  # a rebuild writes it again
    assert await _all(store) == ["f2"]


async def test_rejected_objects_fail_the_write_and_are_named(store: FactStore) -> None:
    await store.upsert(A, [stored(make_fact("good"))])
    wrong = [stored(make_fact(f"bad{i}"), [1.0, 0.0]) for i in range(2)]  # the tenant has 3
    with pytest.raises(StoreWriteFailed) as failed:
        await store.upsert(A, wrong)
    assert set(failed.value.failures) == {"bad0", "bad1"}
    assert "bad0" in str(failed.value) and "bad1" in str(failed.value)
    assert await store.get(A, ["bad0", "bad1"]) == {}
    assert await _all(store) == ["good"]


async def test_each_failed_object_of_a_batch_is_reported(
    weaviate_settings: Settings, store_prefix: str
) -> None:
    """The server's per-object errors among successes (below the mixed-dimension check)."""
    store = await _open(weaviate_settings, store_prefix)
    await store.upsert(A, [stored(make_fact("good0"))])
    chunk = [stored(make_fact(f"good{i}")) for i in range(1, 6)]
    chunk.insert(3, stored(make_fact("bad"), [1.0, 0.0]))
    failures = await store._write(A, chunk)
    assert set(failures) == {"bad"}
    assert "dimension" in failures["bad"]
    assert len(await store.get(A, [f"good{i}" for i in range(6)])) == 6
    await store.close()


async def test_mixed_dimensions_fail_before_a_new_namespace_takes_one(store: FactStore) -> None:
    # A new tenant would take its dimension from whichever vector it indexes first.
    batch = [stored(make_fact(f"good{i}")) for i in range(3)]
    batch.insert(0, stored(make_fact("bad"), [1.0, 0.0]))
    with pytest.raises(StoreWriteFailed) as failed:
        await store.upsert(A, batch)
    assert set(failed.value.failures) == {"bad"}
    await store.upsert(A, batch[1:])
    assert await _all(store) == ["good0", "good1", "good2"]
    assert len(await _search(store, query="fact", alpha=0.5)) == 3


async def test_a_query_vector_of_another_dimension_is_refused(store: FactStore) -> None:
    await store.upsert(A, [stored(make_fact("f1", "the fact"))])
    for alpha in (0.0, 0.5):
        with pytest.raises(StoreError):
            await _search(store, query="fact", vector=[1.0, 0.0], alpha=alpha)


async def test_facts_of_another_namespace_are_refused(store: FactStore) -> None:
    with pytest.raises(ValueError, match="belongs to namespace desk-b"):
        await store.upsert(A, [stored(make_fact("f1", namespace=B))])


async def test_opening_twice_reuses_the_collections(
    weaviate_settings: Settings, weaviate_client: weaviate.WeaviateClient, store_prefix: str
) -> None:
    first = await _open(weaviate_settings, store_prefix)
    await first.upsert(A, [stored(make_fact("f1"))])
    second = await _open(weaviate_settings, store_prefix)
    assert set(await second.get(A, ["f1"])) == {"f1"}
    await first.close()
    await second.close()


async def test_an_unreachable_server_is_unavailable(weaviate_settings: Settings) -> None:
    wrong = weaviate_settings.weaviate.model_copy(update={"http_port": 1, "grpc_port": 2})
    with pytest.raises(StoreUnavailable):
        await WeaviateFactStore.open(wrong, StoreSettings())


_WORKS = {"relation": "employer", "object_type": "organization"}


async def test_search_by_entity_keeps_facts_about_it(store: FactStore) -> None:
    ana = make_fact("f1", "Ana Silva works for Vela.", subject="Ana Silva", object="Vela", **_WORKS)
    bo = make_fact("f2", "Bo Lind works for Vela.", subject="Bo Lind", object="Vela", **_WORKS)
    text_only = make_fact("f3", "Ana Silva lives in Porto.")
    nameless = make_fact("f4", "it rained all week")
    await store.upsert(A, [stored(ana), stored(bo), stored(text_only), stored(nameless)])
    assert sorted(await _search(store)) == ["f1", "f2", "f3", "f4"]
    assert sorted(await _search(store, entities=["ana silva"])) == ["f1", "f3"]
    assert sorted(await _search(store, entities=["vela", "porto"])) == ["f1", "f2", "f3"]
    assert await _search(store, entities=["lind"]) == ["f2"]
    assert await _search(store, entities=["nobody"]) == []
    assert await _search(store, entities=[]) == []
    assert await _search(store, B, entities=["ana silva"]) == []


async def test_facts_written_before_the_entity_index_are_keyed_on_first_use(
    weaviate_settings: Settings, weaviate_client: weaviate.WeaviateClient, store_prefix: str
) -> None:
    """Objects as the previous version wrote them (no entity keys) are found by entity."""
    from factstream.store.schema import ENTITY_PROPERTIES

    real = await _open(weaviate_settings, store_prefix)
    try:
        await real.upsert(A, [stored(make_fact("f0", "Bo Lind lives in Oslo."))])
        facts = [make_fact(f"f{i}", f"Ana Silva fact {i}.") for i in (1, 2)]
        write_as_before(weaviate_client, store_prefix, A, facts, lacking=ENTITY_PROPERTIES)
        assert sorted(await _search(real, entities=["ana silva"])) == ["f1", "f2"]
        assert await _search(real, entities=["bo lind"]) == ["f0"]
    finally:
        await real.close()
