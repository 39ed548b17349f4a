"""`eval update-retrieval` on real Weaviate and the real embedder (a slice of CLARK-News).

The editor's retrieval (names query, subject lift, first stage reranked) must see at least
as many superseded facts as the store's plain hybrid search it replaced, on the same KB.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from factstream.config import EditorSettings
from factstream.embed.st_embedder import SentenceTransformerEmbedder
from factstream.store.weaviate_store import WeaviateFactStore
from factstream_lab.eval.datasets import load_clark
from factstream_lab.eval.retrieval import evaluate_update_retrieval, load_facts, retrieval_variants

SLICE = Path(__file__).parents[1] / "data" / "clark-temporal"


@pytest.mark.parametrize("edited", [False, True])
async def test_the_configured_retrieval_sees_more_than_the_plain_search(
    weaviate_store: WeaviateFactStore,
    embedder: SentenceTransformerEmbedder,
    edited: bool,
) -> None:
    store = weaviate_store
    try:
        clark = load_clark(SLICE)
        await load_facts(store, embedder, clark, "retrieval", edited=edited)
        variants = retrieval_variants(EditorSettings())[:2]  # configured, plain (before)
        best, before = await evaluate_update_retrieval(
            store, embedder, clark, "retrieval", variants
        )
    finally:
        await store.drop_namespace("retrieval")
    assert best.changes == before.changes > 10
    assert best.editor_recall >= before.editor_recall
    assert best.recall_at[1] > before.recall_at[1]
    assert 0 < best.ms_mean < 1000


async def test_on_a_conversation_world_the_statement_lift_ranks_more_first(
    weaviate_store: WeaviateFactStore,
    embedder: SentenceTransformerEmbedder,
    tmp_path: Path,
) -> None:
    # A chunk's names lift every fact of both speakers alike; what a line says of its
    # speaker ("I moved to Lisbon.") tells which relation changed.
    from factstream_lab.world.generate import WorldConfig, generate_world, write_world

    write_world(generate_world(WorldConfig(seed=1, people=5, steps=4)), tmp_path)
    store = weaviate_store
    try:
        clark = load_clark(tmp_path)
        await load_facts(store, embedder, clark, "world")
        best = retrieval_variants(EditorSettings())[0]
        assert best.statement_lift > 0 and best.filler_lift > 0  # on by default
        variants = [
            best,
            best.but("off", statement_lift=0.0),
            best.but("no fillers", filler_lift=0.0),
        ]
        lifted, off, unfilled = await evaluate_update_retrieval(
            store, embedder, clark, "world", variants
        )
    finally:
        await store.drop_namespace("world")
    assert lifted.changes == off.changes > 10
    assert lifted.recall_at[1] > off.recall_at[1]
    assert lifted.recall_at_n > off.recall_at_n
    assert lifted.editor_recall >= off.editor_recall
    # "I've joined Kestrel Air", where Kestrel Air is someone's employer: the filler cue
    # tells the employer changed, not the job title the relation's cosine mistakes it for.
    assert lifted.recall_at[1] > unfilled.recall_at[1]
    assert lifted.recall_at[1] <= lifted.ceiling_at_1 < 1.0  # a chunk with two changes
