"""`factstream eval convo` end to end: a generated world through a real worker (real Kafka and
Weaviate), the deterministic LM double reading the turns' words (tests/fixtures/world_reader):
it extracts what each turn says, closes or invalidates a slot's earlier value when a turn
gives it another, and answers from the listed fact most about the question.

So every single-hop question, changed or not, is answered right if the pipeline applies the
double's decisions: retrieval lists the subject's facts, and only the current value is still
true. A pipeline that kept superseded facts true would answer the changed ones by rank."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
from fixtures.decisions import Decisions
from fixtures.stack import StackFactory
from fixtures.world_reader import world_patterns

from factstream_lab.world.generate import WorldConfig, generate_world, write_world

_WORLD = WorldConfig(seed=2, people=4, steps=2, changes=2)


def _decisions(world_dir: Path) -> Decisions:
    write_world(generate_world(_WORLD), world_dir)
    return Decisions(patterns=world_patterns(), best_fact=True)


async def test_a_world_goes_through_the_shared_runner(
    stack_factory: StackFactory, tmp_path: Path
) -> None:
    world_dir = tmp_path / "world"
    stack = await stack_factory(_decisions(world_dir), FACTSTREAM_API_MIN_SIMILARITY="-1")
    out = tmp_path / "results"
    args = [
        "eval",
        "convo",
        "--data",
        str(world_dir),
        "--seed",
        str(_WORLD.seed),
        "--out",
        str(out),
    ]
    run = subprocess.run(
        [sys.executable, "-m", "factstream", *args],
        env={**os.environ, **stack.env},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    [path] = sorted(out.glob("convo-*.json"))
    data = orjson.loads(path.read_bytes())
    documents = (world_dir / "documents.jsonl").read_text().splitlines()
    assert data["kind"] == "convo" and data["namespace"].startswith("eval-convo-")
    assert data["documents"] == len(documents) and data["asked"] > 0
    assert data["failed_answers"] == 0
    print(f"convo: {data['correct']}/{data['asked']} correct")
    assert data["tokens"]["ingest"]["extract_facts"]["prompt"] > 0
    hops = {
        q["question"]: q["hops"]
        for q in map(orjson.loads, (world_dir / "questions.jsonl").read_bytes().splitlines())
    }
    single = [a for a in data["answers"] if hops[a["question"]] == 1]
    changed = [a for a in single if a["changed"]]
    assert changed and len(single) < data["asked"], "the world must change and have hops"
    wrong = [(a["question"], a["expected"], a["predicted"]) for a in single if not a["correct"]]
    assert not wrong, wrong
    # Multi-hop questions may go either way: the floor is the single-hop share.
    assert data["correct"] >= len(single) and data["accuracy"] >= len(single) / data["asked"]
    assert (out / "convo-accuracy.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
