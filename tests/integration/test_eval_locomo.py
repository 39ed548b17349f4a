"""`eval locomo` on a slice of conversation 26 (tests/data/locomo-slice, sessions 1 to 3).

Turns: the turns go in as passages (real Weaviate, the real embedder, no LM asked); every
question goes through the ask path's retrieval in both modes as of the end of the slice.
Facts: the first document goes through a real worker (the LM double scripted) and the
questions answered in it are scored from the facts it wrote.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
from fixtures.decisions import Decisions
from fixtures.stack import StackFactory
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


async def test_the_facts_kb_streams_the_slice_through_a_worker(
    stack_factory: StackFactory, tmp_path: Path
) -> None:
    # The LM double extracts one fact from the turn that says it; the worker, Kafka and
    # Weaviate are real, and the documents go out as `factstream publish` sends them.
    said = "I went to a LGBTQ support group yesterday"
    fact = "Caroline went to a LGBTQ support group yesterday."
    stack = await stack_factory(Decisions(extract={said: [fact]}))
    out = tmp_path / "results"
    args = ["eval", "locomo", "--data", str(SLICE), "--kb", "facts", "--sessions", "1"]
    run = subprocess.run(
        [sys.executable, "-m", "factstream", *args, "--limit", "1", "--out", str(out)],
        env={**os.environ, **stack.env},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    [path] = sorted(out.glob("locomo-*.json"))
    data = orjson.loads(path.read_bytes())
    facts = data["kbs"]["facts"]
    assert list(data["kbs"]) == ["facts"] and facts["documents"] == {"26": 1}
    assert facts["skipped_documents"] == {"26": []} and facts["facts_true"] == {"26": 1}
    [published] = sorted(out.glob("locomo-*/26-documents.jsonl"))
    assert len(published.read_text().splitlines()) == 1
    rows = {r["question"]: r for r in data["questions"]}
    went = rows["When did Caroline go to the LGBTQ support group?"]
    assert went["recall"]["single"]["at_10"] == 1.0 and went["provenance"] == ["turn"]
    # Its valid time starts on the day 'yesterday' names, read against the session's date.
    assert went["time_resolved"] is True, went
    assert went["read"]["valid_from"].startswith("2023-05-07")
    assert (out / f"locomo-{data['run']}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
