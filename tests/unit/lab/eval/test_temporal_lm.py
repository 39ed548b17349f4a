"""``factstream eval temporal --lm``: exact match per method, results files, plot and table.

Memory store, hashing embedder and a scripted LM that picks the first choice some retrieved
fact names (tests/fixtures/decisions.py), over the CLARK-News slice in
tests/data/clark-temporal. With valid time only the fact that held on the day is retrieved
of its relation, so erase must answer every question; rag retrieves every object the
relation ever had, so the first choice wins whatever the date.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from fixtures.decisions import Decisions
from typer.testing import CliRunner

import factstream.clients
from factstream.cli import app
from factstream.clients import Clients
from factstream.config import Settings
from factstream.embed.fake import HashingEmbedder
from factstream.lm.base import CompletionRequest
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.metrics import Metrics
from factstream.store.memory import InMemoryFactStore
from factstream_lab.eval.datasets import load_clark
from factstream_lab.eval.tables import render
from factstream_lab.eval.temporal_lm import choice_questions, score_answers
from factstream_lab.eval.temporal_questions import Position, triple_intervals

SLICE = Path(__file__).parents[3] / "data" / "clark-temporal"


def _reply(request: CompletionRequest) -> str:
    return Decisions().answer(request.prompt, request.messages[-1].content)


@pytest.fixture(autouse=True)
def _memory_clients(monkeypatch: pytest.MonkeyPatch) -> None:
    async def build(settings: Settings, registry: object) -> Clients:
        lm = ScriptedLM([_reply] * 500)
        metrics = Metrics.create()
        return Clients(metrics, InMemoryFactStore(), HashingEmbedder(), lm, TaskRunner(lm))

    monkeypatch.setattr(factstream.clients, "_build_clients", build)
    monkeypatch.setenv("FACTSTREAM_API_MIN_SIMILARITY", "-1")


def test_questions_are_multiple_choice_over_the_relations_objects() -> None:
    facts, _ = triple_intervals(load_clark(SLICE).triples)
    questions = choice_questions(facts)
    assert questions and all(len(q.choices) >= 2 for q in questions)
    assert all(q.expected in q.choices for q in questions)
    assert {q.question.position for q in questions[:3]} == set(Position)  # a mix first
    assert choice_questions(facts, 4) == questions[:4]
    scored = score_answers(questions[:2], [(questions[0].expected, None), (None, "LMError")])
    assert (scored["asked"], scored["correct"], scored["failed_answers"]) == (2, 1, 1)
    assert scored["by_group"]["all"]["accuracy"] == 0.5


def test_eval_temporal_lm_scores_each_method_and_writes_results_and_plot(
    tmp_path: Path,
) -> None:
    args = ["eval", "temporal", "--data", str(SLICE), "--lm", "--out", str(tmp_path)]
    result = CliRunner().invoke(app, [*args, "--method", "erase", "--method", "rag"])
    assert result.exit_code == 0, result.output
    erase = orjson.loads((tmp_path / "temporal-lm-erase.json").read_bytes())
    rag = orjson.loads((tmp_path / "temporal-lm-rag.json").read_bytes())
    assert erase["kind"] == rag["kind"] == "temporal-lm"
    assert erase["asked"] == rag["asked"] == len(erase["answers"]) > 10
    assert erase["accuracy"] == 1.0 and erase["failed_answers"] == 0
    assert rag["accuracy"] < 0.8  # no valid time: the date does not decide
    assert isinstance(erase["tokens"]["total"], int)  # the scripted LM counts none
    assert f"erase: {erase['correct']}/{erase['asked']} correct" in result.output
    assert (tmp_path / "temporal-lm.png").stat().st_size > 1000
    files = [tmp_path / "temporal-lm-erase.json", tmp_path / "temporal-lm-rag.json"]
    table = render("temporal-lm", files)
    assert f"| erase | {erase['by_group']['inside']['correct']}/" in table
    assert "| method | inside | before | after | all | chance |" in table


def test_eval_temporal_lm_limits_questions_and_refuses_unknown_methods(tmp_path: Path) -> None:
    args = ["eval", "temporal", "--data", str(SLICE), "--lm", "--out", str(tmp_path)]
    limited = CliRunner().invoke(app, [*args, "--limit", "5"])
    assert limited.exit_code == 0, limited.output
    assert orjson.loads((tmp_path / "temporal-lm-erase.json").read_bytes())["asked"] == 5
    bad = CliRunner().invoke(app, [*args, "--method", "fact-rag"])
    assert bad.exit_code != 0 and "unknown method" in bad.output
