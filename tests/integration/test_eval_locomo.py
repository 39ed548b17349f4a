"""`eval locomo --kb turns` on a slice: real Weaviate, the real embedder, no LM asked.

Sessions 1 to 3 of conversation 26 (tests/data/locomo-slice) go in as turn passages; every
question goes through the ask path's retrieval in both modes as of the end of the slice.
"""

from __future__ import annotations

from pathlib import Path

from prometheus_client import CollectorRegistry

from factstream.ask.query import QueryEngine
from factstream.config import Settings
from factstream.embed.st_embedder import SentenceTransformerEmbedder
from factstream.lm.factory import build_lm
from factstream.lm.tasks.runner import build_task_runner
from factstream.metrics import Metrics
from factstream.store.weaviate_store import WeaviateFactStore
from factstream_lab.eval.clark import Progress
from factstream_lab.eval.locomo.data import load_locomo
from factstream_lab.eval.locomo.run import MODES, turns_kb
from factstream_lab.eval.locomo.score import by_category

SLICE = Path(__file__).parents[1] / "data" / "locomo-slice"


async def test_turn_passages_find_the_evidence_without_an_lm(
    weaviate_settings: Settings,
    weaviate_store: WeaviateFactStore,
    embedder: SentenceTransformerEmbedder,
    tmp_path: Path,
) -> None:
    registry = CollectorRegistry()
    metrics = Metrics.create(registry)
    lm = build_lm(weaviate_settings.lm, tmp_path, metrics.lm)  # built, never asked
    runner = build_task_runner(weaviate_settings.lm, lm, metrics.lm)
    engine = QueryEngine(
        weaviate_store,
        embedder,
        runner,
        weaviate_settings.api,
        alpha=weaviate_settings.editor.alpha,
    )
    (conversation,) = load_locomo(SLICE)
    scores, loaded = await turns_kb(
        weaviate_store, embedder, engine, [conversation], "it", Progress()
    )
    await lm.aclose()
    assert await weaviate_store.namespaces() == []  # the run's namespace is dropped
    assert loaded["passages"] == len(conversation.turns)
    assert len(scores) == len(conversation.questions)
    summary = by_category(scores, MODES, "single")
    every = summary["all"]
    # Ten of 58 passages drawn at random would hold about 17% of the evidence.
    assert every["evidence_recall_at_10"] >= 0.5, every
    for row in summary.values():
        for mode in row["modes"].values():
            if mode["at_5"] is not None:
                assert mode["at_10"] >= mode["at_5"]
    # Every turn passage cites its own turn: a question's evidence is found by its id.
    assert all(s.detail["provenance"] == ["passage"] for s in scores)
    # "I went to a LGBTQ support group yesterday", said on 8 May 2023: 7 May 2023.
    went = next(s for s in scores if s.question.startswith("When did Caroline go to the LGBTQ"))
    assert went.time is True and went.detail["read"]["expression"] == "yesterday"
    temporal = summary["2"]["time"]
    assert temporal["gold_readable"] + temporal["gold_unreadable"] == summary["2"]["questions"]
    assert not any(s.recall and "multi_hop" not in s.recall for s in scores)
    asked = [m for m in registry.collect() if m.name == "factstream_lm_requests"]
    assert all(sample.value == 0 for family in asked for sample in family.samples)
