"""The ask benchmark's rows: the configured runtime asked again after the reference."""

from __future__ import annotations

import copy

from bench.report import RESULTS, load, rows

_FILE = RESULTS / "20261127T075001Z.json"  # onnx first, the torch reference second


def _latencies(p50: float, p95: float) -> dict[str, float]:
    return {"p50_ms": p50, "p95_ms": p95}


def test_the_second_pass_has_its_row_beside_the_first_search() -> None:
    report = copy.deepcopy(load(_FILE))
    step = report["benchmarks"]["ask"]["facts"]["100000"]
    step["again"] = {**_latencies(21.5, 30.25), "search": _latencies(12.5, 19.75)}
    found = [r for r in rows(report) if "the same again" in r[1]]
    assert found == [
        (
            "3 ask, no generation",
            "the same again with onnx embeddings, after the reference, 100,000 facts; "
            "the store's search, first pass / again",
            "21.5 / 30.25; 16.78 / 42.38, 12.5 / 19.75",
            "",
            "",
        )
    ]


def test_files_without_a_second_pass_have_no_such_row() -> None:
    assert not [r for r in rows(load(_FILE)) if "the same again" in r[1]]
