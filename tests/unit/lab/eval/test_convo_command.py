"""`eval convo` generates a world (unless given one) and runs the shared protocol on it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from factstream.cli import app
from factstream_lab.eval import clark


def _results(run: clark.ClarkRun) -> dict[str, Any]:
    checkpoint = {"share": 1.0, "documents": 3, "asked": 2, "changed": 1, "accuracy": 0.5}
    return {
        "kind": run.kind,
        "method": run.method,
        "run": "20261125-000000-erase",
        "lm": {"model": "m"},
        "checkpoints": [checkpoint],
        "correct": 1,
        "asked": 2,
        "tokens": {"total": 10},
        "seconds": {"wall": 1.0},
    }


def test_convo_generates_a_world_and_runs_the_clark_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[clark.ClarkRun] = []

    async def fake_run(run: clark.ClarkRun, progress: Any = None) -> dict[str, Any]:
        seen.append(run)
        return _results(run)

    monkeypatch.setattr(clark, "run_clark", fake_run)
    args = ["eval", "convo", "--seed", "4", "--people", "3", "--steps", "1", "--out"]
    result = CliRunner().invoke(app, [*args, str(tmp_path)])
    assert result.exit_code == 0, result.output
    [run] = seen
    assert run.kind == "convo" and run.seed == 4 and run.method == "erase"
    assert (run.data / "documents.jsonl").exists() and run.data.parent == tmp_path
    assert (tmp_path / "convo-20261125-000000-erase.json").exists()
    assert (tmp_path / "convo-accuracy.png").exists()
    assert not list(tmp_path.glob("clark-*"))


def test_world_documents_go_in_as_conversations_with_turns(tmp_path: Path) -> None:
    from factstream_lab.world.generate import WorldConfig, generate_world, write_world

    write_world(generate_world(WorldConfig(seed=1, people=3, steps=1)), tmp_path)
    run = clark.ClarkRun(tmp_path, "erase", tmp_path, kind="convo")
    docs = clark._documents(run, "ns")
    assert docs and all(d.kind.value == "conversation" and d.turns for d in docs)
    assert docs[0].text.splitlines()[0].startswith(docs[0].turns[0].speaker + ": ")  # type: ignore[index]
