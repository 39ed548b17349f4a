"""``factstream eval locomo --kb turns``: the table, the results JSON and the plot.

The command opens its clients as usual; here an empty memory store, the hashing embedder
and an LM with no script (any call would fail the run), over tests/data/locomo-slice.
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

SLICE = Path(__file__).parents[4] / "data" / "locomo-slice"


@pytest.fixture
def lm(monkeypatch: pytest.MonkeyPatch) -> ScriptedLM:
    scripted = ScriptedLM()

    async def build(settings: Settings, registry: object) -> Clients:
        store = InMemoryFactStore()
        return Clients(Metrics.create(), store, HashingEmbedder(), scripted, TaskRunner(scripted))

    monkeypatch.setattr(factstream.clients, "_build_clients", build)
    return scripted


def test_the_turns_kb_writes_per_category_results_without_the_lm(
    tmp_path: Path, lm: ScriptedLM
) -> None:
    out = tmp_path / "out"
    args = ["eval", "locomo", "--data", str(SLICE), "--kb", "turns", "--sessions", "2"]
    result = CliRunner().invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert lm.requests == []
    [path] = out.glob("locomo-*.json")
    data = orjson.loads(path.read_bytes())
    assert data["slice"]["sessions_kept"] == {"26": 2}
    categories = data["kbs"]["turns"]["categories"]
    assert set(categories) == {"1", "2", "3", "4", "5", "all"}
    for row in categories.values():
        assert {"evidence_recall_at_5", "evidence_recall_at_10", "modes"} <= set(row)
    assert "time_resolved" in categories["2"] and "time_resolved" not in categories["4"]
    asked = [r for r in data["questions"] if r["recall"]]
    assert len(asked) == categories["all"]["with_evidence"] == data["slice"]["questions"]
    assert (out / f"locomo-{data['run']}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "temporal" in result.output


def test_an_unknown_knowledge_base_is_refused(tmp_path: Path, lm: ScriptedLM) -> None:
    result = CliRunner().invoke(
        app, ["eval", "locomo", "--data", str(SLICE), "--kb", "graph", "--out", str(tmp_path)]
    )
    assert result.exit_code != 0 and "unknown knowledge base" in result.output


def test_the_turns_kb_records_the_window_its_passages_were_embedded_with(
    tmp_path: Path, lm: ScriptedLM
) -> None:
    out = tmp_path / "out"
    args = ["eval", "locomo", "--data", str(SLICE), "--kb", "turns", "--sessions", "1"]
    window = ["--embed-before", "1", "--embed-after", "2"]
    result = CliRunner().invoke(app, [*args, *window, "--out", str(out)])
    assert result.exit_code == 0, result.output
    [path] = out.glob("locomo-*.json")
    turns = orjson.loads(path.read_bytes())["kbs"]["turns"]
    assert turns["embed_window"] == {"before": 1, "after": 2}
    assert turns["turn_context"] == 0
