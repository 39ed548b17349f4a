"""``factstream eval subject-check``: supersessions passed, wrong invalidations refused (no LM).

On tests/data/clark-tiny: three changes (Springfield's mayor twice, Bob Jones's team), each
stated by a document that names its subject; seven pairs of a document and an earlier fact
it does not supersede, of which one names the fact's subject (Springfield's first mayor,
in the report of its third).
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from factstream.cli import app

TINY = Path(__file__).parents[3] / "data" / "clark-tiny"


def test_eval_subject_check_writes_each_tests_figures(tmp_path: Path) -> None:
    demo = tmp_path / "demo.jsonl"
    demo.write_text((TINY / "documents.jsonl").read_text())
    out = tmp_path / "results" / "subject-check.json"
    args = ["eval", "subject-check", "--data", str(TINY), "--demo", str(demo), "--json", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "supersessions passed" in result.output
    report = json.loads(out.read_text())
    assert (report["documents"], report["triples"]) == (5, 5)
    variants = {v["name"]: v for v in report["variants"]}
    assert list(variants) == [
        "subject-as-written",
        "subject-aliases-title",
        "entities",
        "entities-offices",
    ]
    rule = variants["entities-offices"]  # the editor's rule
    assert rule["wrong_refused"] == variants["entities"]["wrong_refused"]  # no mayor's noun
    assert rule["supersessions_passed"] == {"counted": 3, "total": 3, "share": 1.0}
    assert rule["scored_passed"]["total"] == 3 and rule["misses"] == []
    assert rule["wrong_refused"] == {"counted": 6, "total": 7, "share": round(6 / 7, 4)}
    assert rule["demo_wrong_refused"] == rule["wrong_refused"]
    [through] = rule["demo_passed_wrong"]
    assert (through["fact"], through["document_id"]) == (
        "Springfield head of government Alice Smith.",
        "tiny-5",
    )


def test_an_empty_demo_file_leaves_the_demo_figures_empty(tmp_path: Path) -> None:
    out = tmp_path / "subject-check.json"
    missing = tmp_path / "no-demo.jsonl"
    missing.write_text("")
    args = ["eval", "subject-check", "--data", str(TINY), "--demo", str(missing)]
    result = CliRunner().invoke(app, [*args, "--json", str(out)])
    assert result.exit_code == 0, result.output
    rule = json.loads(out.read_text())["variants"][-1]
    assert rule["demo_wrong_refused"] == {"counted": 0, "total": 0, "share": None}
