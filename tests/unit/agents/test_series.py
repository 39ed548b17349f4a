"""Per-namespace series (agents/series.py): totals always, namespaces only when chosen or
among the busiest, so the series exported do not grow with the namespaces (issue 40)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from factstream.agents.series import NamespaceSeries
from factstream.metrics import Metrics
from factstream.store.base import FactCounts
from factstream.topics.records import EditOp

ADD, INVALIDATE = EditOp.ADD, EditOp.INVALIDATE


def _series_count(registry: CollectorRegistry) -> int:
    return sum(
        1
        for family in registry.collect()
        for sample in family.samples
        if not sample.name.endswith("_created")
    )


def _namespaces(registry: CollectorRegistry, name: str) -> set[str]:
    return {
        s.labels["namespace"]
        for family in registry.collect()
        for s in family.samples
        if s.name == name
    }


def _run(namespaces: int) -> tuple[Metrics, NamespaceSeries]:
    metrics = Metrics.create()
    series = NamespaceSeries(metrics.worker, ["pinned"], busiest=3)
    for i in range(namespaces):
        series.edited(f"ns-{i}", [ADD, ADD])
        series.set_facts(f"ns-{i}", 0, FactCounts(2, 0))
    for _ in range(5):  # three busy ones
        for busy in ("busy-a", "busy-b", "busy-c"):
            series.edited(busy, [ADD, INVALIDATE])
    series.edited("pinned", [ADD])
    return metrics, series


def test_the_series_exported_do_not_grow_with_the_namespaces() -> None:
    small, _ = _run(100)
    large, series = _run(10_000)
    assert _series_count(small.registry) == _series_count(large.registry)
    assert series.tracked() <= 64  # the busiest-namespaces counters are bounded too


def test_totals_count_every_namespace() -> None:
    metrics, _ = _run(1_000)
    total = metrics.registry.get_sample_value("factstream_edits_total", {"op": "add"})
    assert total == 2 * 1_000 + 3 * 5 + 1


def test_the_busiest_and_the_chosen_have_series_of_their_own() -> None:
    metrics, series = _run(1_000)
    edited = _namespaces(metrics.registry, "factstream_namespace_edits_total")
    assert edited == {"busy-a", "busy-b", "busy-c", "pinned"}
    assert series.exported("pinned") and not series.exported("ns-5")
    value = metrics.registry.get_sample_value(
        "factstream_namespace_edits_total", {"namespace": "pinned", "op": "add"}
    )
    assert value == 1


def test_a_namespace_that_stops_being_busy_loses_its_series() -> None:
    metrics = Metrics.create()
    series = NamespaceSeries(metrics.worker, [], busiest=1)
    series.edited("first", [ADD])
    series.set_facts("first", 0, FactCounts(1, 0))
    assert _namespaces(metrics.registry, "factstream_facts") == {"first"}
    series.edited("second", [ADD, ADD, ADD])
    assert _namespaces(metrics.registry, "factstream_namespace_edits_total") == {"second"}
    assert _namespaces(metrics.registry, "factstream_facts") == set()


def test_revoked_partitions_take_their_facts_gauges_with_them() -> None:
    metrics = Metrics.create()
    series = NamespaceSeries(metrics.worker, ["a", "b"], busiest=0)
    series.set_facts("a", 0, FactCounts(1, 0))
    series.set_facts("b", 1, FactCounts(1, 1))
    series.revoke({0})
    assert _namespaces(metrics.registry, "factstream_facts") == {"b"}
