"""The single-ask diagnostics' shared parts: the rotation of the parts, the tail split."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench import kept
from bench.ask_tail import _tail
from factstream_lab import provenance


async def test_each_question_turns_the_order_by_one_and_the_warm_up_is_not_timed() -> None:
    ran: list[str] = []

    def part(name: str) -> object:
        async def run() -> None:
            ran.append(name)

        return run

    parts = {name: part(name) for name in "abc"}
    times: dict[str, list[float]] = {}
    for i in range(kept.WARM_UP + 2):
        ran.clear()
        await kept.rotated(i, parts, times)  # type: ignore[arg-type]
        assert ran == ["abc"[(i + j) % 3] for j in range(3)]
    assert {name: len(seconds) for name, seconds in times.items()} == {"a": 2, "b": 2, "c": 2}


def test_the_tail_is_the_slowest_tenth_against_the_rest() -> None:
    rows = [
        {"total": t / 1000, "embed": 0.001, "search": t / 1000 - 0.001, "gc": 0.0}
        for t in range(1, 21)
    ]
    rows[19]["gc"] = 0.002
    tail = _tail(rows)
    assert tail["questions_with_gc"] == 1 and tail["slowest_10pct"]["gc"] == 1.0
    assert tail["slowest_10pct"]["count"] == 2 and tail["the_rest"]["count"] == 18
    assert tail["slowest_10pct"]["total"] == 19.5 and tail["the_rest"]["total"] == 9.5


def test_a_diagnostics_results_file_names_its_commit(tmp_path: Path) -> None:
    async def run(
        facts: int, queries: int, out: Path, data: Path, keep: str | None
    ) -> dict[str, Any]:
        return {"timestamp": "20300101T000000Z", "facts": facts}

    kept.cli(run, "probe", "")(7, 1, tmp_path, tmp_path, None)
    written = json.loads((tmp_path / "20300101T000000Z-probe.json").read_text())
    assert written["facts"] == 7
    assert written["commit"] == provenance.commit()
    assert written["commit"] != ""
