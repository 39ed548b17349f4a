"""`factstream eval clark` end to end: a real worker per method, real Kafka and Weaviate, the
deterministic LM stub, on a hand-made stream whose right answers are known (tests/data/clark-tiny).

The stub's multiple-choice rule picks the first choice that a listed fact contains. Facts that
stay true after they were superseded (rag, fact-rag) therefore answer the old choice; only
erase, which invalidates them, answers every question right.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
from fixtures.decisions import Decisions
from fixtures.stack import StackFactory

TINY = Path(__file__).parents[1] / "data" / "clark-tiny"

DECISIONS = Decisions(
    extract={
        "Alice Smith is the mayor": ["Alice Smith is the mayor of Springfield."],
        "plays for the Red Sox": ["Bob Jones plays for the Red Sox."],
        "Carol White became": ["Carol White is the mayor of Springfield."],
        "signed with the Yankees": ["Bob Jones plays for the Yankees."],
        "Dana Green was elected": ["Dana Green is the mayor of Springfield."],
    },
    supersede={
        "Carol White became": ["Alice Smith is the mayor"],
        "signed with the Yankees": ["plays for the Red Sox"],
        "Dana Green was elected": ["Carol White is the mayor"],
    },
)


def _results(out: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for path in sorted(out.glob("clark-*.json")):
        data = orjson.loads(path.read_bytes())
        found[data["method"]] = data
    return found


async def test_three_methods_on_a_hand_made_stream(
    stack_factory: StackFactory, tmp_path: Path
) -> None:
    stack = await stack_factory(DECISIONS, FACTSTREAM_API_MIN_SIMILARITY="-1")
    out = tmp_path / "results"
    env = {**os.environ, **stack.env}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "factstream",
            "eval",
            "clark",
            "--data",
            str(TINY),
            "--method",
            "erase",
            "--method",
            "rag",
            "--method",
            "fact-rag",
            "--out",
            str(out),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    results = _results(out)
    assert set(results) == {"erase", "rag", "fact-rag"}

    for method, data in results.items():
        # Checkpoints worked out by hand (tests/data/clark-tiny/README.md).
        asked = [(cp["share"], cp["documents"], cp["asked"]) for cp in data["checkpoints"]]
        assert asked == [(0.2, 3, 2), (0.4, 4, 2), (0.6, 4, 0), (0.8, 5, 2), (1.0, 5, 0)], method
        assert data["namespace"].startswith("eval-clark-") and data["failed_answers"] == 0
        assert data["tokens"]["ask"]["answer_choice"]["prompt"] > 0
        # q0 (3 choices) and q1 (2 choices) are asked three times each.
        assert abs(data["chance"] - (3 / 3 + 3 / 2) / 6) < 1e-9

    erase = results["erase"]
    assert erase["correct"] == erase["asked"] == 6, erase["answers"]
    assert erase["tokens"]["ingest"]["classify_facts"]["prompt"] > 0
    assert erase["tokens"]["ingest"]["extract_facts"]["prompt"] > 0

    # Stale facts stay true: only Bob's team before his transfer is answered right.
    for method in ("rag", "fact-rag"):
        right = [(a["share"], a["expected"]) for a in results[method]["answers"] if a["correct"]]
        assert right == [(0.2, "Red Sox")], (method, results[method]["answers"])
    assert results["rag"]["tokens"]["ingest"] == {}  # passages need no LM
    assert set(results["fact-rag"]["tokens"]["ingest"]) == {"extract_facts"}

    plot = out / "clark-accuracy.png"
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
