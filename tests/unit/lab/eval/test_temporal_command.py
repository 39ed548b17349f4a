"""``factstream eval temporal``: the table of scores by mode and position, and temporal.json.

The command opens its clients as usual; here an empty memory store and the hashing
embedder (no services, no LM), over the CLARK-News slice in tests/data/clark-temporal.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

import factstream.clients
from factstream.cli import app
from factstream.clients import Clients
from factstream.config import Settings
from factstream.embed.fake import HashingEmbedder
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.metrics import Metrics
from factstream.store.memory import InMemoryFactStore

SLICE = Path(__file__).parents[3] / "data" / "clark-temporal"


@pytest.fixture(autouse=True)
def _memory_clients(monkeypatch: pytest.MonkeyPatch) -> None:
    async def build(settings: Settings, registry: object) -> Clients:
        lm = ScriptedLM()
        store = InMemoryFactStore()
        return Clients(Metrics.create(), store, HashingEmbedder(), lm, TaskRunner(lm))

    monkeypatch.setattr(factstream.clients, "_build_clients", build)


def test_eval_temporal_prints_the_scores_and_writes_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["eval", "temporal", "--data", str(SLICE)])
    assert result.exit_code == 0, result.output
    report = orjson.loads((tmp_path / "eval-results" / "temporal.json").read_bytes())
    assert report["kind"] == "temporal" and report["facts"] == 60
    for score in report["scores"]:
        assert score["mode"]["name"] in result.output
        assert f"{score['accuracy']:.1%}" in result.output
    for position in ("inside", "before", "after"):
        assert position in result.output
    assert f"{report['questions']['all']} questions" in result.output
    assert "report: eval-results/temporal.json" in result.output

    out = tmp_path / "elsewhere"
    again = CliRunner().invoke(app, ["eval", "temporal", "--data", str(SLICE), "--out", str(out)])
    assert again.exit_code == 0, again.output
    assert (out / "temporal.json").exists()


def test_eval_temporal_needs_a_data_folder(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["eval", "temporal", "--data", str(tmp_path / "none")])
    assert result.exit_code == 2
