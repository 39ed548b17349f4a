"""The mirror's connection string and metrics."""

from __future__ import annotations

from prometheus_client import CollectorRegistry
from psycopg.conninfo import conninfo_to_dict
from pydantic import SecretStr

from factstream.config import PostgresSettings
from factstream.metrics import MirrorMetrics


def test_the_dsn_names_the_configured_server_and_quotes_what_needs_it() -> None:
    assert conninfo_to_dict(PostgresSettings().dsn) == {
        "host": "127.0.0.1",
        "port": "5433",
        "user": "factstream",
        "dbname": "factstream",
    }
    odd = PostgresSettings(database="my db", password=SecretStr("it's \\ odd"))
    parsed = conninfo_to_dict(odd.dsn)
    assert (parsed["dbname"], parsed["password"]) == ("my db", "it's \\ odd")


def test_the_mirror_exports_lag_and_edits_applied() -> None:
    registry = CollectorRegistry()
    metrics = MirrorMetrics.create(registry)
    metrics.edits.inc(3)
    metrics.lag.set(7)
    metrics.batches.labels("duplicate").inc()
    assert registry.get_sample_value("factstream_mirror_edits_applied_total") == 3
    assert registry.get_sample_value("factstream_mirror_lag_records") == 7
    assert (
        registry.get_sample_value("factstream_mirror_batches_total", {"outcome": "duplicate"}) == 1
    )
