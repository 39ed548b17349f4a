"""Multi-hop answering on the real stack: Weaviate's entity index, the real embedder,
and the llama.cpp server (SmolLM2-135M) answering and checking its own draft.

The chain is retrieval, so it is asserted exactly: Ana Silva's employer, then its chief
executive, at two valid times. What SmolLM2 answers and whether its self-check holds the
draft supported prove the plumbing only; they are printed (``-s``), and the round count
and metric must agree with the verdict.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from fixtures.chain_world import BOTH, T0, chain_edits
from prometheus_client import CollectorRegistry

from factstream.config import ApiSettings, EmbedSettings, Settings, StoreSettings
from factstream.embed.st_embedder import SentenceTransformerEmbedder
from factstream.knowledge.materializer import Materializer
from factstream.knowledge.query import AskRequest, QueryEngine
from factstream.lm.factory import build_task_runner
from factstream.lm.openai_compat import OpenAICompatLM
from factstream.metrics import LMMetrics, QueryMetrics
from factstream.store.weaviate_store import WeaviateFactStore
from factstream.temporal.intervals import at

NS = "multihop"


@pytest.fixture
async def store(weaviate_settings: Settings, store_prefix: str) -> AsyncIterator[WeaviateFactStore]:
    opened = await WeaviateFactStore.open(
        weaviate_settings.weaviate, StoreSettings(collection_prefix=store_prefix)
    )
    try:
        yield opened
    finally:
        await opened.drop_namespace(NS)
        await opened.close()


async def test_a_two_hop_answer_follows_the_chain_and_checks_itself(
    lm_settings: Settings, store: WeaviateFactStore
) -> None:
    embedder = await SentenceTransformerEmbedder.load(EmbedSettings())
    registry = CollectorRegistry()
    lm_metrics, metrics = LMMetrics.create(registry), QueryMetrics.create(registry)
    settings = lm_settings.lm.model_copy(update={"cache": False})
    lm = OpenAICompatLM(settings, lm_metrics)
    try:
        materializer = Materializer(store, embedder)
        for batch in chain_edits(NS):
            await materializer.apply(batch)
        api = ApiSettings(min_similarity=-1.0, time_plan=False, self_check=True)
        runner = build_task_runner(settings, lm, lm_metrics)
        engine = QueryEngine(store, embedder, runner, api, alpha=0.75, metrics=metrics)

        then = await engine.gather(
            AskRequest(BOTH, NS, valid=at(T0 + timedelta(days=10)), mode="multi_hop")
        )
        assert [(h.entity, h.answer) for h in then.hops] == [
            ("Ana Silva", "Vela"),
            ("Vela", "Bo Lind"),
        ]
        result = await engine.ask(AskRequest(BOTH, NS, mode="multi_hop"))
        assert result.mode == "multi_hop"
        assert [(h.entity, h.answer) for h in result.hops] == [
            ("Ana Silva", "Orbit"),
            ("Orbit", "Cy Ode"),
        ]
        assert [f.fact.text for f in result.facts][:2] == [
            "Ana Silva works for Orbit.",
            "Cy Ode is the chief executive officer of Orbit.",
        ]
        print(f"SmolLM2: {result.answer!r}, confidence {result.confidence}, {result.rounds} rounds")
        assert result.answer.strip() and result.model
        assert "verify" in result.timings
        second = metrics.second_rounds.labels("multi_hop")._value.get()
        if result.rounds == 2:
            assert second == 1 and "verify_2" in result.timings
        else:
            assert second == 0 and result.confidence in (1.0, None)
    finally:
        await lm.aclose()
        await embedder.aclose()
