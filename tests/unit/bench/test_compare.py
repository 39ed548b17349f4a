"""python -m bench compare: every figure of two results files, its change, and moves marked."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.compare import changes, figures, lines
from factstream_lab.provenance import commit, stamped

OLD = {
    "commit": "aaa1111",
    "timestamp": "20261127T000000Z",
    "machine": {"load_avg_at_start": [2.0, 1.0, 1.0]},
    "benchmarks": {
        "ask": {"p95_ms": 40.0, "met": False, "trials": [0.3, 0.31]},
        "gone": {"docs": 3},
    },
}
NEW = {
    "commit": "bbb2222",
    "timestamp": "20261129T000000Z",
    "machine": {"load_avg_at_start": [8.0, 1.0, 1.0]},
    "benchmarks": {
        "ask": {"p95_ms": 70.0, "met": False, "trials": [0.3, 0.305]},
        "new": {"zero": 0},
    },
}


def test_every_number_by_its_path_booleans_aside() -> None:
    found = dict(figures(OLD))
    assert found["benchmarks.ask.p95_ms"] == 40.0
    assert found["benchmarks.ask.trials[1]"] == 0.31
    assert "benchmarks.ask.met" not in found and "commit" not in found


def test_changes_pair_the_files_and_keep_figures_of_one() -> None:
    paired = {path: (a, b) for path, a, b in changes(OLD, NEW)}
    assert paired["benchmarks.ask.p95_ms"] == (40.0, 70.0)
    assert paired["benchmarks.gone.docs"] == (3.0, None)
    assert paired["benchmarks.new.zero"] == (None, 0.0)


def test_the_text_heads_with_the_commits_and_marks_moves_over_the_flag() -> None:
    text = list(lines(OLD, NEW, flag=10.0))
    assert text[0] == "commit: aaa1111 -> bbb2222"
    by_path = {line.split(": ")[0].strip("! ").strip(): line for line in text}
    assert by_path["benchmarks.ask.p95_ms"].startswith("! ")
    assert "(+30, +75.0%)" in by_path["benchmarks.ask.p95_ms"]
    assert by_path["benchmarks.ask.trials[1]"].startswith("  ")  # -1.6%: under the flag
    assert by_path["benchmarks.gone.docs"].endswith("(in one file only)")
    looser = {line.split(": ")[0].strip("! ").strip(): line for line in lines(OLD, NEW, 80.0)}
    assert looser["benchmarks.ask.p95_ms"].startswith("  ")


def test_python_m_bench_compare(tmp_path: Path) -> None:
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(OLD))
    new.write_text(json.dumps(NEW))
    done = subprocess.run(
        [sys.executable, "-m", "bench", "compare", str(old), str(new)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "! benchmarks.ask.p95_ms: 40 -> 70 (+30, +75.0%)" in done.stdout.splitlines()
    missing = subprocess.run(
        [sys.executable, "-m", "bench", "compare", str(old)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 2 and "usage" in missing.stderr


def test_results_are_stamped_with_the_commit() -> None:
    here = commit()
    assert here != "unknown"  # the tests run in a git checkout
    assert stamped({"a": 1}) == {"a": 1, "commit": here}
    assert stamped({"commit": "kept"})["commit"] == "kept"
    assert stamped([{"row": 1}, 2]) == [{"row": 1, "commit": here}, 2]
