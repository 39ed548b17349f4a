"""`eval multihop` on a generated world, over the in-memory store and a hashing embedder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factstream.embed.fake import HashingEmbedder
from factstream.eval.multihop import load_cases, run_multihop
from factstream.eval.temporal import Retrieval
from factstream.store.memory import InMemoryFactStore
from factstream.world.generate import WorldConfig, generate_world, write_world


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("world")
    write_world(generate_world(WorldConfig(seed=1, people=5, steps=4)), folder)
    return folder


def test_cases_are_the_multi_hop_answers_with_their_chains(world: Path) -> None:
    cases = load_cases(world / "questions.jsonl")
    assert cases and all(len(c.chain) >= 2 for c in cases)
    assert all(c.chain[-1].object == c.answer for c in cases)
    raw = [json.loads(line) for line in (world / "questions.jsonl").read_text().splitlines()]
    answers = sum(len(q["answers"]) for q in raw if q["hops"] >= 2)
    assert len(cases) == answers


async def test_each_hop_is_found_from_the_question_or_the_gold_entity(
    world: Path, tmp_path: Path
) -> None:
    store = InMemoryFactStore()
    report = await run_multihop(
        world, store, HashingEmbedder(), Retrieval(10, 0.0, 0.5), 3, out=tmp_path
    )
    assert report.planned == report.cases > 0
    assert [s.hop for s in report.hops] == [1, 2, 3]
    assert all(s.cases > 0 and s.recall_at_1 >= 0.9 for s in report.hops)
    assert report.chain_correct >= 0.9
    # One retrieval with the whole question misses most last hops: why chains are needed.
    assert report.single_last_hop_in_top_k < report.chain_correct
    written = json.loads((tmp_path / "multihop.json").read_text())
    assert written["kind"] == "multihop" and written["cases"] == report.cases
    assert (tmp_path / "multihop.png").stat().st_size > 0
    assert await store.namespaces() == []  # the eval's namespace is dropped


async def test_text_only_kb_finds_hops_by_the_names_in_the_text(world: Path) -> None:
    report = await run_multihop(
        world,
        InMemoryFactStore(),
        HashingEmbedder(),
        Retrieval(10, 0.0, 0.5),
        3,
        structured=False,
    )
    assert report.kb == "text-only"
    assert all(s.recall_at_k >= 0.9 for s in report.hops)


def test_a_world_without_chains_is_refused(tmp_path: Path) -> None:
    line = {"question": "Q?", "hops": 2, "answers": [{"answer": "A", "known_from": None}]}
    (tmp_path / "questions.jsonl").write_text(json.dumps(line) + "\n")
    with pytest.raises(ValueError, match="chain"):
        load_cases(tmp_path / "questions.jsonl")
