"""``factstream feeds``: list the configured feeds, poll them once, or follow them."""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import TYPE_CHECKING, Annotated

import typer
from prometheus_client import start_http_server
from rich.table import Table

from factstream.config import load_settings
from factstream.console import console
from factstream.feeds.config import FeedListError, FeedSpec, load_feeds
from factstream.metrics import Metrics

if TYPE_CHECKING:
    from factstream.feeds.poller import PollResult

__all__ = ["feeds_app"]

feeds_app = typer.Typer(
    help="Follow RSS/Atom feeds into factstream.documents (FACTSTREAM_FEEDS_FILE or _LIST).",
    no_args_is_help=True,
)


def _feeds() -> list[FeedSpec]:
    try:
        return load_feeds(load_settings().feeds)
    except FeedListError as exc:
        console.print(f"error: {exc}", markup=False)
        raise typer.Exit(code=1) from exc


@feeds_app.command("list")
def list_feeds() -> None:
    """The configured feeds."""
    settings = load_settings().feeds
    table = Table("feed", "namespace", "interval s", "url")
    for feed in _feeds():
        table.add_row(
            feed.label, feed.namespace, f"{feed.interval(settings.interval_s):g}", str(feed.url)
        )
    console.print(table, soft_wrap=True)


@feeds_app.command("poll-once")
def poll_once() -> None:
    """Poll every feed once and print what was published; exit code 1 if a feed failed."""
    from factstream.feeds.poller import open_poller  # Kafka and HTTP clients: load on use

    feeds, settings = _feeds(), load_settings()

    async def one_round() -> list[PollResult]:
        async with open_poller(settings, Metrics.create().feeds, feeds) as poller:
            return await poller.poll_once(force=True)

    results = asyncio.run(one_round())
    for result in results:
        line = f"{result.feed.label}: {result.outcome}, {len(result.published)} published"
        console.print(line + (f" ({result.error})" if result.error else ""), markup=False)
        for doc in result.published:
            console.print(f"  {doc.id}  {doc.timestamp:%Y-%m-%dT%H:%MZ}  {doc.title}", markup=False)
    if any(result.outcome == "error" for result in results):
        raise typer.Exit(code=1)


@feeds_app.command("run")
def run(
    loglevel: Annotated[str, typer.Option(help="Log level.")] = "info",
    metrics_port: Annotated[
        int, typer.Option(help="Serve Prometheus /metrics on this port (0: off).")
    ] = 0,
) -> None:
    """Follow the configured feeds until Ctrl-C or SIGTERM."""
    from factstream.feeds.poller import run_feeds  # Kafka and HTTP clients: load on use

    logging.basicConfig(level=loglevel.upper(), format="%(asctime)s %(levelname)s %(message)s")
    settings = load_settings()
    _feeds()  # a bad feed list fails here, before anything starts
    metrics = Metrics.create()
    if metrics_port:
        start_http_server(metrics_port, registry=metrics.registry)

    async def follow() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await run_feeds(settings, metrics.feeds, stop)

    asyncio.run(follow())
