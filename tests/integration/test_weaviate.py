"""Real Weaviate: multi-tenant collection, our own vectors, near-vector and hybrid search."""

from __future__ import annotations

import weaviate
from weaviate.classes.config import Configure, DataType, Property
from weaviate.classes.query import MetadataQuery
from weaviate.classes.tenants import Tenant

FACTS = {
    "lawler": ("Mike Lawler is the United States representative for New York.", [1.0, 0.0, 0.0]),
    "queen": ("The Queen will address the nation on Christmas Day.", [0.0, 1.0, 0.0]),
    "rocket": ("The rocket launch was postponed because of high winds.", [0.0, 0.0, 1.0]),
}


def _collection(client: weaviate.WeaviateClient, name: str, tenants: list[str]) -> None:
    client.collections.create(
        name,
        properties=[
            Property(name="text", data_type=DataType.TEXT),
            Property(name="key", data_type=DataType.TEXT),
        ],
        vector_config=Configure.Vectors.self_provided(),
        multi_tenancy_config=Configure.multi_tenancy(enabled=True),
    )
    client.collections.use(name).tenants.create([Tenant(name=t) for t in tenants])


def test_multi_tenant_collection_with_own_vectors(
    weaviate_client: weaviate.WeaviateClient, collection_name: str
) -> None:
    _collection(weaviate_client, collection_name, ["desk-a", "desk-b"])
    coll = weaviate_client.collections.use(collection_name)
    assert coll.config.get().multi_tenancy_config.enabled
    assert set(coll.tenants.get()) == {"desk-a", "desk-b"}
    facts = coll.with_tenant("desk-a")
    uid = facts.data.insert(
        {"text": FACTS["lawler"][0], "key": "lawler"}, vector=FACTS["lawler"][1]
    )
    obj = facts.query.fetch_object_by_id(uid, include_vector=True)
    assert obj is not None and obj.properties["key"] == "lawler"
    assert obj.vector["default"] == FACTS["lawler"][1]


def test_near_vector_and_hybrid_search(
    weaviate_client: weaviate.WeaviateClient, collection_name: str
) -> None:
    _collection(weaviate_client, collection_name, ["desk-a"])
    facts = weaviate_client.collections.use(collection_name).with_tenant("desk-a")
    for key, (text, vector) in FACTS.items():
        facts.data.insert({"text": text, "key": key}, vector=vector)

    near = facts.query.near_vector(
        [0.1, 0.0, 0.9], limit=3, return_metadata=MetadataQuery(distance=True)
    )
    assert [o.properties["key"] for o in near.objects][:1] == ["rocket"]
    distances = [o.metadata.distance for o in near.objects]
    assert distances == sorted(distances)

    # Pure keyword side (alpha=0): BM25 finds the only fact that names the Queen.
    keyword = facts.query.hybrid("Queen Christmas", vector=[0.0, 0.0, 1.0], alpha=0.0, limit=1)
    assert [o.properties["key"] for o in keyword.objects] == ["queen"]
    # Pure vector side (alpha=1): the same query text, but the vector decides.
    dense = facts.query.hybrid("Queen Christmas", vector=[0.0, 0.0, 1.0], alpha=1.0, limit=1)
    assert [o.properties["key"] for o in dense.objects] == ["rocket"]


def test_tenants_are_isolated(
    weaviate_client: weaviate.WeaviateClient, collection_name: str
) -> None:
    _collection(weaviate_client, collection_name, ["desk-a", "desk-b"])
    coll = weaviate_client.collections.use(collection_name)
    text, vector = FACTS["queen"]
    uid = coll.with_tenant("desk-a").data.insert({"text": text, "key": "queen"}, vector=vector)
    other = coll.with_tenant("desk-b")
    assert other.query.fetch_object_by_id(uid) is None
    assert other.query.near_vector(vector, limit=5).objects == []
    assert other.query.bm25("Queen", limit=5).objects == []
    assert coll.with_tenant("desk-a").query.bm25("Queen", limit=5).objects[0].uuid == uid
