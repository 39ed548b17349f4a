"""``factstream mirror postgres``: keep PostgreSQL tables of the facts, exactly once."""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated

import typer

from factstream.config import load_settings
from factstream.console import console

__all__ = ["mirror_app"]

mirror_app = typer.Typer(
    help="Mirror the changelog into a database (docs/consuming.md).", no_args_is_help=True
)


@mirror_app.command("postgres")
def postgres(
    dsn: Annotated[
        str | None,
        typer.Option(help="libpq connection string or URI; default from FACTSTREAM_POSTGRES_*."),
    ] = None,
    namespace: Annotated[
        list[str] | None,
        typer.Option("--namespace", "-n", help="Only this namespace (repeat for more)."),
    ] = None,
    follow: Annotated[
        bool,
        typer.Option("--follow/--until-caught-up", help="Keep mirroring, or stop once caught up."),
    ] = True,
    metrics_port: Annotated[
        int | None, typer.Option(help="Prometheus /metrics port (0: off); FACTSTREAM_MIRROR_*.")
    ] = None,
) -> None:
    """Keep the `facts`, `edits` and `dead_letters` tables current from the changelog.

    Each round of edits and the changelog offsets it read go in one PostgreSQL transaction;
    a restart resumes from the offsets in the database."""
    from prometheus_client import CollectorRegistry, start_http_server

    from factstream.metrics import MirrorMetrics
    from factstream.mirror.runner import run_mirror
    from factstream.mirror.store import RoundResult

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    logging.getLogger("aiokafka").setLevel(logging.WARNING)
    settings = load_settings()
    registry = CollectorRegistry()
    metrics = MirrorMetrics.create(registry)
    port = settings.mirror.metrics_port if metrics_port is None else metrics_port
    if port:
        start_http_server(port, settings.mirror.metrics_host, registry=registry)

    def each_round(result: RoundResult, lag: int) -> None:
        console.print(
            f"round: {result.edits} edits, {result.batches} batches applied, "
            f"{result.duplicates} duplicate batches, {result.dead} dead letters; lag {lag}",
            markup=False,
        )

    try:
        report = asyncio.run(
            run_mirror(
                settings.kafka,
                settings.mirror,
                dsn or settings.postgres.dsn,
                namespace,
                follow=follow,
                metrics=metrics,
                on_round=each_round,
            )
        )
    except KeyboardInterrupt:
        return
    console.print(
        f"mirrored: {report.edits} edits in {report.batches} batches over {report.rounds} "
        f"rounds; {report.duplicates} duplicate batches, {report.dead_letters} dead letters",
        markup=False,
    )
