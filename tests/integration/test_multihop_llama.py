"""Multi-hop answering on the real stack: Weaviate's entity index, the real embedder,
and the llama.cpp server (SmolLM2-135M) answering and checking its own draft.

The chain is retrieval, so it is asserted exactly: Ana Silva's employer, then its chief
executive, at two valid times. What SmolLM2 answers and whether its self-check holds the
draft supported prove the plumbing only; they are printed (``-s``), and the round count
and metric must agree with the verdict.
"""

from __future__ import annotations

from datetime import timedelta

from fixtures.chain_world import BOTH, T0, chain_edits
from fixtures.llama_query import LlamaQuery

from factstream.ask.query import AskRequest
from factstream.config import ApiSettings
from factstream.edit.materializer import Materializer
from factstream.store.weaviate_store import WeaviateFactStore
from factstream.temporal.intervals import at

NS = "multihop"


async def test_a_two_hop_answer_follows_the_chain_and_checks_itself(
    llama_query: LlamaQuery, weaviate_store: WeaviateFactStore
) -> None:
    materializer = Materializer(weaviate_store, llama_query.embedder)
    for batch in chain_edits(NS):
        await materializer.apply(batch)
    api = ApiSettings(min_similarity=-1.0, time_plan=False, self_check=True)
    engine = llama_query.engine(weaviate_store, api)

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
    chain = ["Ana Silva works for Orbit.", "Cy Ode is the chief executive officer of Orbit."]
    texts = [f.fact.text for f in result.facts]
    if result.rounds == 1:  # the chain's facts lead the answer's evidence
        assert texts[:2] == chain
    else:  # a second round puts what the draft's search found first, the chain's facts after
        assert set(chain) <= set(texts)
    print(f"SmolLM2: {result.answer!r}, confidence {result.confidence}, {result.rounds} rounds")
    assert result.answer.strip() and result.model
    assert "verify" in result.timings
    second = llama_query.metrics.second_rounds.labels("multi_hop")._value.get()
    if result.rounds == 2:
        assert second == 1 and "verify_2" in result.timings
    else:
        assert second == 0 and result.confidence in (1.0, None)
