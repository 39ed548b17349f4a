"""update-retrieval on a hand-made stream whose answer is known (in-memory store, no LM)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from fixtures.clark_stream import clark_stream

from factstream.config import EditorSettings
from factstream.embed.fake import HashingEmbedder
from factstream.store.memory import InMemoryFactStore
from factstream_lab.eval.datasets import load_clark
from factstream_lab.eval.retrieval import (
    evaluate_update_retrieval,
    load_facts,
    retrieval_variants,
    scored_changes,
)


async def test_the_stale_fact_is_found_and_unknowable_changes_are_left_out(tmp_path: Path) -> None:
    clark = load_clark(clark_stream(tmp_path))
    store, embedder = InMemoryFactStore(), HashingEmbedder()
    assert await load_facts(store, embedder, clark, "eval") == 5
    configs = retrieval_variants(EditorSettings(top_k=1, min_similarity=-1.0))
    reports = await evaluate_update_retrieval(store, embedder, clark, "eval", configs)
    for report in reports:
        assert (report.changes, report.not_in_kb) == (1, 1)
        # "Ann employer Acme." shares the most words with d3, and the newer fact of d3 itself
        # is not yet in the KB (retrieval runs as of just before the document).
        assert report.ranks == [1]
        assert report.recall_at[1] == 1.0 and report.editor_recall == 1.0


async def test_a_floor_above_every_similarity_hides_the_stale_fact(tmp_path: Path) -> None:
    clark = load_clark(clark_stream(tmp_path))
    store, embedder = InMemoryFactStore(), HashingEmbedder()
    await load_facts(store, embedder, clark, "eval")
    configs = retrieval_variants(EditorSettings(top_k=10, min_similarity=1.0))
    reports = {
        r.config.name: r
        for r in await evaluate_update_retrieval(store, embedder, clark, "eval", configs)
    }
    before = reports["store hybrid, no rerank (before issue 20)"]
    assert before.recall_at[20] == 1.0  # found without a floor ...
    assert before.above_floor == 0.0 and before.editor_recall == 0.0  # ... but not by the editor
    # d3 names Ann, the stale fact's subject: named facts pass the floor by default ...
    assert reports["configured"].editor_recall == 1.0
    # ... and not when that is switched off.
    assert reports["named facts below floor cut"].editor_recall == 0.0


async def test_every_variant_reports_its_time(tmp_path: Path) -> None:
    clark = load_clark(clark_stream(tmp_path))
    store, embedder = InMemoryFactStore(), HashingEmbedder()
    await load_facts(store, embedder, clark, "eval")
    configs = retrieval_variants(EditorSettings())
    reports = await evaluate_update_retrieval(store, embedder, clark, "eval", configs)
    assert len({r.config.name for r in reports}) == len(configs) >= 10
    assert all(0 < r.ms_mean <= r.ms_p95 for r in reports)
    assert all(sum(r.seen) / len(r.seen) == r.editor_recall for r in reports)


async def test_an_edited_kb_closes_each_superseded_fact_when_its_successor_arrives(
    tmp_path: Path,
) -> None:
    clark = load_clark(clark_stream(tmp_path))
    edited, stream = InMemoryFactStore(), InMemoryFactStore()
    embedder = HashingEmbedder()
    await load_facts(edited, embedder, clark, "eval", edited=True)
    await load_facts(stream, embedder, clark, "eval")
    assert (await edited.count_facts("eval")).false == 1  # Ann at Acme, closed by d3
    assert (await stream.count_facts("eval")).false == 0
    # Still true just before d3, so the change is scored the same way.
    configs = retrieval_variants(EditorSettings(top_k=1, min_similarity=-1.0))[:1]
    [report] = await evaluate_update_retrieval(edited, embedder, clark, "eval", configs)
    assert report.ranks == [1]


async def test_a_generated_world_is_scored_and_every_stale_fact_was_stated_first(
    tmp_path: Path,
) -> None:
    from factstream_lab.world.generate import WorldConfig, generate_world, write_world

    write_world(generate_world(WorldConfig(seed=1, people=5, steps=4)), tmp_path)
    clark = load_clark(tmp_path)
    store, embedder = InMemoryFactStore(), HashingEmbedder()
    assert await load_facts(store, embedder, clark, "eval") == len(clark.triples)
    configs = retrieval_variants(EditorSettings(top_k=10, min_similarity=-1.0))[:1]
    [hybrid] = await evaluate_update_retrieval(store, embedder, clark, "eval", configs)
    # The world tells every state before the change that ends it: no change is unknowable.
    assert hybrid.changes == len(clark.changes()) > 0 and hybrid.not_in_kb == 0
    assert len(hybrid.ranks) == hybrid.changes
    # A chunk may supersede several facts (a move and a new job) and only one ranks first:
    # "first of n" counts a stale fact ranked within the n its document supersedes.
    changes = scored_changes(clark)
    per_document = Counter(c.new.document_id for c in changes)
    assert max(per_document.values()) > 1
    assert hybrid.recall_at[1] <= len(per_document) / hybrid.changes
    # The ceiling is that bound, measured: distinct documents over changes (below 1 here).
    assert hybrid.ceiling_at_1 == len(per_document) / hybrid.changes < 1.0
    # Each stale fact ranked first is its own document's: recall@1 counts those documents.
    assert hybrid.documents_first * len(per_document) == pytest.approx(
        hybrid.recall_at[1] * hybrid.changes
    )
    within = [
        r is not None and r <= per_document[c.new.document_id]
        for c, r in zip(changes, hybrid.ranks, strict=True)
    ]
    assert hybrid.recall_at_n == sum(within) / hybrid.changes >= hybrid.recall_at[1]
