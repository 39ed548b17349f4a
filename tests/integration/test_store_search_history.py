"""The same live facts are found alike, whatever their write history (issue 39), with
StoreSettings.bm25_b 0 (FACTSTREAM_STORE_BM25_B, the default; Weaviate's 0.75 fails this test).

Two namespaces hold the same facts, true, with the same texts, vectors and histories; in one
every fact was written four times (as a fact is rewritten at every reinforce, close or
invalidation), in the other once. The store's hybrid search must rank them alike, with the
same scores: the editor's first stage cuts its pool by that score, so a deployment whose
store scored by its write history (Weaviate's BM25 length normalisation counts replaced
versions until a compaction, schema.BM25_B) would show a document other candidates than one
at a time in another deployment showed it, although both hold the same knowledge base.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import pytest
from unit.store.builders import make_fact

from factstream.config import Settings, StoreSettings
from factstream.store.base import StoredFact
from factstream.store.weaviate_store import WeaviateFactStore

pytestmark = pytest.mark.integration

_WORDS = [
    "king",
    "queen",
    "minister",
    "party",
    "team",
    "member",
    "sports",
    "soccer",
    "national",
    "president",
    "club",
    "league",
    "city",
    "river",
    "council",
    "election",
    "winger",
    "striker",
    "coach",
]
_QUERIES = ("king queen", "national soccer team member", "club league coach", "river city")


@pytest.fixture
async def store(weaviate_settings: Settings, store_prefix: str) -> AsyncIterator[WeaviateFactStore]:
    real = await WeaviateFactStore.open(
        weaviate_settings.weaviate, StoreSettings(collection_prefix=store_prefix, bm25_b=0.0)
    )
    yield real
    await real.close()


def _facts(namespace: str, rewrites: int) -> list[StoredFact]:
    """120 facts of 3 to 14 words; each one's history holds ``rewrites`` + 1 reinforcements."""
    rnd = random.Random(39)  # noqa: S311 - test data, not secrets
    out = []
    for i in range(120):
        text = " ".join(rnd.choice(_WORDS) for _ in range(rnd.randint(3, 14))) + "."
        vector = [rnd.uniform(-1.0, 1.0) for _ in range(8)]
        changes = tuple((float(d), True) for d in range(rewrites + 1))
        out.append(StoredFact(make_fact(f"f{i:03d}", text, changes, namespace), vector))
    return out


async def test_the_same_live_facts_score_alike_whatever_their_write_history(
    store: WeaviateFactStore,
) -> None:
    final = 3
    for version in range(final + 1):  # "rewritten": written once per change of its history
        await store.upsert("rewritten", _facts("rewritten", version))
    await store.upsert("once", _facts("once", final))
    assert (await store.count_facts("rewritten")) == (await store.count_facts("once"))
    query_vector = _facts("once", 0)[7].vector
    for query in _QUERIES:
        for alpha in (0.0, 0.75):
            found = []
            for namespace in ("rewritten", "once"):
                hits = await store.search(
                    namespace,
                    query,
                    query_vector,
                    as_of=None,
                    top_k=30,
                    min_similarity=-1.0,
                    alpha=alpha,
                )
                found.append([(h.fact.fact_id, h.score, h.similarity) for h in hits])
            assert found[0], (query, alpha)  # the query finds something
            assert found[0] == found[1], (query, alpha)
