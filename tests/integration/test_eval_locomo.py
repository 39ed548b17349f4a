"""`eval locomo` on a slice of conversation 26 (tests/data/locomo-slice, sessions 1 to 3).

Turns: the turns go in as passages (real Weaviate, the real embedder, no LM asked); every
question goes through the ask path's retrieval in both modes as of the end of the slice.
Facts: sessions 1 and 2 go through a real worker, the LM double extracting facts from the
turns that say them and, at "Researching adoption agencies", closing one earlier summer plan
and invalidating another; every question is scored from the facts it wrote, answered by the
query agent (token F1) and judged (the double's judge).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
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


# Turn words -> what the double extracts; the adoption turn (session 2) supersedes both plans.
_EDUCATION = "Caroline's plans for the summer are to continue her education."
_COUNSELING = "Caroline's plans for the summer are to work in counseling."
_ADOPTION = "Caroline's summer plan is researching adoption agencies."
_SAID = {
    "I went to a LGBTQ support group yesterday": [
        "Caroline went to a LGBTQ support group yesterday."
    ],
    "Gonna continue my edu": [_EDUCATION],  # D1:9
    "I'm keen on counseling": [_COUNSELING],  # D1:11
    "Researching adoption agencies": [_ADOPTION],  # D2:8
}


def _double() -> Decisions:
    adoption = "Researching adoption agencies"
    return Decisions(
        extract=_SAID,
        replace={adoption: {"are to continue her education": None}},  # outdated: closed
        supersede={adoption: ["are to work in counseling"]},  # wrong: invalidated
        best_fact=True,
    )


async def test_the_facts_kb_streams_the_slice_through_a_worker(
    stack_factory: StackFactory, tmp_path: Path
) -> None:
    # The worker, Kafka and Weaviate are real, and the documents go out as `factstream
    # publish` sends them; the LM double reads the turns (and judges the answers).
    stack = await stack_factory(_double())
    out = tmp_path / "results"
    args = ["eval", "locomo", "--data", str(SLICE), "--kb", "facts", "--sessions", "2", "--lm"]
    judge = ["--judge-url", stack.env["FACTSTREAM_LM_URL"]]
    run = subprocess.run(
        [sys.executable, "-m", "factstream", *args, *judge, "--out", str(out)],
        env={**os.environ, **stack.env},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    [path] = sorted(out.glob("locomo-*.json"))
    data = orjson.loads(path.read_bytes())
    facts = data["kbs"]["facts"]
    (conversation,) = load_locomo(SLICE)
    kept = conversation.sliced(2)
    documents = sum(-(-len(s.turns) // 8) for s in kept.sessions)
    assert list(data["kbs"]) == ["facts"] and facts["documents"] == {"26": documents}
    assert facts["skipped_documents"] == {"26": []}
    rate = facts["ingest_rate"]  # after the first applied, against the model alone
    assert rate["steady_documents"] == documents - 1
    assert rate["embed_bound_documents_per_second"] > 0
    # Four facts extracted; the invalidated plan is false, the closed one stays true (its
    # valid time ended at the adoption turn's session).
    assert facts["facts_true"] == {"26": 3}, facts
    [published] = sorted(out.glob("locomo-*/26-documents.jsonl"))
    assert len(published.read_text().splitlines()) == documents
    rows = {r["question"]: r for r in data["questions"]}
    went = rows["When did Caroline go to the LGBTQ support group?"]
    assert went["recall"]["single"]["at_10"] == 1.0 and went["provenance"] == ["turn"]
    # Its valid time starts on the day 'yesterday' names, read against the session's date.
    assert went["time_resolved"] is True, went
    assert went["read"]["valid_from"].startswith("2023-05-07")
    # The summer plans: only the adoption plan is still true, so the double answers it
    # (a stale plan shares more words with the question: it would win if still true).
    plans = rows["What are Caroline's plans for the summer?"]
    assert plans["predicted"] == _ADOPTION, plans
    # 'researching adoption agencies' is 3 of the answer's 7 normalized tokens: F1 0.6.
    assert plans["answer_score"] == pytest.approx(0.6) and plans["judge_correct"] is True
    answered = facts["answers"]
    scored = [r for r in data["questions"] if r["answer_score"] is not None]
    assert scored and all(r["answer_error"] is None for r in scored)
    assert answered["4"]["answered"] == sum(r["category"] == 4 for r in scored)
    assert answered["1-4"]["judged"] == sum(r["category"] != 5 for r in scored)
    assert answered["5"]["abstained"] is not None and "f1" not in answered["5"]
    assert answered["4"]["f1"] >= 0.6 / answered["4"]["answered"]
    assert (out / f"locomo-{data['run']}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
