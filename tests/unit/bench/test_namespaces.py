"""bench/namespaces.py's inputs: conversations of a few chunks, one namespace each."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest.mock import patch

import orjson

from bench.namespaces import _chunks, _slope_kib, plot_against_n
from factstream.topics.records import Document, DocumentKind


def _doc(i: int) -> Document:
    return Document(
        id=f"d{i}",
        namespace="x",
        kind=DocumentKind.ARTICLE,
        timestamp=datetime(2024, 1, 1, tzinfo=UTC),
        text=f"text {i}",
    )


def test_fresh_namespaces_get_their_chunks_together_and_warm_ones_share_the_rest() -> None:
    base = [_doc(i) for i in range(12)]
    fresh = _chunks(base, "f-", [f"n{i}" for i in range(6)], 2)
    assert [d.namespace for d in fresh[:4]] == ["n0", "n0", "n1", "n1"]
    assert Counter(d.namespace for d in fresh) == {f"n{i}": 2 for i in range(6)}
    warm = _chunks(base, "w-", ["a", "b", "c"], 2)
    assert Counter(d.namespace for d in warm) == {"a": 4, "b": 4, "c": 4}
    assert len({d.id for d in fresh + warm}) == 24
    assert [d.text for d in fresh] == [d.text for d in base]


def test_the_worker_slope_is_fit_over_the_second_half_of_the_tenths() -> None:
    # 100 MiB a tenth until 500 namespaces (the one-off growth), then 2 KiB a namespace
    tenths = [
        {"namespaces": k * 100, "rss_mib": 100.0 * min(k, 5) + max(k - 5, 0) * 200 / 1024}
        for k in range(1, 11)
    ]
    assert _slope_kib(tenths) == 2.0
    assert _slope_kib([{**t, "rss_mib": 7.0} for t in tenths]) == 0.0
    tenths[4]["rss_mib"] -= 1.0  # the fit starts at the fifth tenth
    assert _slope_kib(tenths) > 2.0


def test_runs_of_several_files_are_plotted_against_n_the_later_file_winning(
    tmp_path: Path,
) -> None:
    run = {
        "fresh_over_warm": 1.0,
        "tenant_create_ms": {"p50_ms": 1.0},
        "worker_kib_per_fresh_namespace": 1.0,
        "series_exported": 300,
        "placement_map": {"entries": 10},
        "ask_ms": {"first_inactive": {"p95_ms": 100.0}},
    }
    old, new = (
        tmp_path / "20260101T000000Z-namespaces.json",
        tmp_path / "20260102T000000Z-namespaces.json",
    )
    old.write_bytes(orjson.dumps({"namespaces": {"runs": [{**run, "n": 10}, {**run, "n": 30}]}}))
    new.write_bytes(orjson.dumps({"namespaces": {"runs": [{**run, "n": 30, "warm_docs": 60}]}}))
    seen: list[list[dict[str, Any]]] = []
    with patch("bench.namespaces._plot", lambda runs, path: seen.append(runs)):
        path = plot_against_n([new, old])
    assert path == tmp_path / "20260102T000000Z-namespaces-against-n.png"
    assert [(r["n"], r["from"]) for r in seen[0]] == [(10, old.name), (30, new.name)]
    assert seen[0][1]["warm_docs"] == 60
