"""`factstream eval convo` end to end: a generated world through a real worker (real Kafka and
Weaviate, the deterministic LM stub scripted from the world's own statements)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
from fixtures.decisions import Decisions
from fixtures.stack import StackFactory

from factstream_lab.world.generate import WorldConfig, generate_world, write_world


def _decisions(world_dir: Path) -> Decisions:
    """Each stating turn's text extracts its statement, named in the third person."""
    config = WorldConfig(seed=2, people=3, steps=1, changes=1)
    world = generate_world(config)
    write_world(world, world_dir)
    extract: dict[str, list[str | dict[str, object]]] = {}
    for conversation in world.conversations:
        chunks = {d.id: d for d in conversation.chunks}
        for st, chunk_id in conversation.stated_in.items():
            turns = chunks[chunk_id].turns or []
            [turn, *_] = [t for t in turns if st.object in t.text or st.subject in t.text]
            extract.setdefault(turn.text, []).append(f"{st.subject} {st.relation} {st.object}.")
    return Decisions(extract=extract)


async def test_a_world_goes_through_the_shared_runner(
    stack_factory: StackFactory, tmp_path: Path
) -> None:
    world_dir = tmp_path / "world"
    stack = await stack_factory(_decisions(world_dir), FACTSTREAM_API_MIN_SIMILARITY="-1")
    out = tmp_path / "results"
    args = ["eval", "convo", "--data", str(world_dir), "--seed", "2", "--out", str(out)]
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
    assert data["tokens"]["ingest"]["extract_facts"]["prompt"] > 0
    assert (out / "convo-accuracy.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
