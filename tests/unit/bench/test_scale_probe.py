"""What the scale-out benchmark reads of its workers: per-worker figures, bound, rebalances."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from bench.scale_probe import (
    WorkerSnap,
    bound,
    generations,
    planned,
    rebalances,
    spread,
    worker_figures,
)
from factstream.streams.placement import partition_of
from factstream.topics.records import Document

_T = datetime(2026, 1, 1, tzinfo=UTC)


def test_a_worker_at_its_lm_limit_shows_its_calls_in_flight_and_the_wait_for_a_slot() -> None:
    before = WorkerSnap(docs=10, lm_calls=20, lm_seconds=10.0, stages={"classify": 1.0})
    after = WorkerSnap(
        docs=50, lm_calls=100, lm_seconds=70.0, partitions=(0, 3), stages={"classify": 5.0}
    )
    figures = worker_figures(before, after, span_s=20.0, latency_ms=500)
    assert figures["documents"] == 40
    assert figures["docs_per_s"] == 2.0
    assert figures["lm_calls"] == 80
    assert figures["lm_mean_in_flight"] == 2.0  # 80 calls x 0.5 s over 20 s
    assert figures["lm_slot_wait_s_per_call"] == 0.25  # 60 s of calls, 40 s of them the LM's
    assert figures["stage_seconds"] == {"classify": 4.0}
    assert figures["partitions"] == [0, 3]


def test_the_bound_is_the_busiest_workers_lm_time() -> None:
    workers = [{"lm_calls": 40}, {"lm_calls": 100}]
    assert bound(workers, latency_ms=500, concurrency=2) == 25.0


def test_rebalances_count_the_generations_any_worker_joined(tmp_path: Path) -> None:
    line = "[INFO] Joined group 'bench1' (generation {}) with member_id x\n"
    (tmp_path / "worker-1.log").write_text(line.format(1) + line.format(2))
    (tmp_path / "worker-2.log").write_text(line.format(2))
    (tmp_path / "stub.log").write_text(line.format(9))
    joined = generations(tmp_path)
    assert joined == [[1, 2], [2]]
    assert rebalances(joined) == 2


def test_the_planned_map_spreads_whole_namespaces_evenly() -> None:
    docs = [
        Document(id=f"d{i}", namespace=ns, kind="article", timestamp=_T, text="x")
        for i, ns in enumerate(["a"] * 4 + ["b"] * 2 + ["c"] * 2 + ["d"] * 1 + ["e"] * 1)
    ]
    placement = planned(docs, 2)
    assert set(placement.namespaces) == {"a", "b", "c", "d", "e"}  # namespaces kept whole
    assert spread(docs, 2, placement) == [5, 5]
    assert spread(docs, 2) == [
        sum(1 for d in docs if partition_of(d.namespace, 2) == p) for p in (0, 1)
    ]
