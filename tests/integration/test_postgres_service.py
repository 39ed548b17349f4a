"""`factstream services up --only postgres` on a fresh cache: initdb, start, database, stop."""

from __future__ import annotations

from pathlib import Path

import psycopg

from factstream.config import Settings
from factstream_lab.stack import manager
from factstream_lab.stack.postgres import PostgresService
from factstream_lab.stack.process import free_port


def test_a_fresh_cache_gets_a_cluster_that_answers_and_stops(tmp_path: Path) -> None:
    port = free_port()
    settings = Settings.from_env(
        {"FACTSTREAM_CACHE_DIR": str(tmp_path), "FACTSTREAM_POSTGRES_PORT": str(port)}
    )
    [row] = manager.up(settings, ["postgres"])
    try:
        assert row.state is manager.ServiceState.STARTED
        assert (tmp_path / "data" / f"postgres-{port}" / "PG_VERSION").exists()
        [svc] = manager.build_services(settings, ["postgres"])
        assert isinstance(svc, PostgresService)
        assert (svc.socket_dir / f".s.PGSQL.{port}").exists()
        with psycopg.connect(settings.postgres.dsn) as conn:
            row_ = conn.execute("SELECT current_database(), current_user").fetchone()
        assert row_ == ("factstream", "factstream")
        # A second up reuses the running server.
        [again] = manager.up(settings, ["postgres"])
        assert again.state is manager.ServiceState.RUNNING and again.pid == row.pid
    finally:
        [down] = manager.down(settings, ["postgres"])
    assert down.state is manager.ServiceState.STOPPED
