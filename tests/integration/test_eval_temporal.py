"""`eval temporal` end to end: real Weaviate, the real embedder, chains of CLARK-News triples.

The facts go through the materializer into Weaviate, the questions through the query
agent's retrieval; with valid time the fact that held on the day is ranked first far more
often than without it, where the fact that holds now wins whatever the date.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from factstream.config import Settings
from factstream.embed.st_embedder import SentenceTransformerEmbedder
from factstream.store.weaviate_store import WeaviateFactStore
from factstream_lab.eval.temporal import retrieval_of, run_temporal

SLICE = Path(__file__).parents[1] / "data" / "clark-temporal"


async def test_the_eval_runs_end_to_end_and_beats_no_valid_time(
    weaviate_settings: Settings,
    weaviate_store: WeaviateFactStore,
    embedder: SentenceTransformerEmbedder,
    tmp_path: Path,
) -> None:
    report = await run_temporal(
        SLICE, weaviate_store, embedder, retrieval_of(weaviate_settings), out=tmp_path
    )
    assert await weaviate_store.namespaces() == []
    assert report.facts == 60 and report.questions["all"] > 80
    assert all(report.questions[p] > 0 for p in ("inside", "before", "after"))
    stripped, whole, none = report.scores
    assert none.mode.valid_time is False
    assert stripped.accuracy >= 0.95 and whole.accuracy >= 0.95, (stripped.misses, whole.misses)
    assert stripped.accuracy > none.accuracy + 0.3
    written = orjson.loads((tmp_path / "temporal.json").read_bytes())
    assert written["scores"][2]["accuracy"] == none.accuracy
