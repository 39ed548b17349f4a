"""``factstream services``: provision, start, stop and check the local stack on 127.0.0.1."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from factstream.config import Settings, load_settings
from factstream.console import console
from factstream_lab.stack import manager
from factstream_lab.stack.manager import ServiceStatus
from factstream_lab.stack.progress import cache_banner, console_progress

__all__ = ["print_status", "services_app"]

services_app = typer.Typer(
    help="The local stack on 127.0.0.1: Apache Kafka, Weaviate, the LM server (and PostgreSQL "
    "for the mirror, when named).",
    no_args_is_help=True,
)

_NAMES = (*manager.SERVICE_NAMES, *manager.OPTIONAL_SERVICE_NAMES)
ServiceName = StrEnum("ServiceName", {name: name for name in _NAMES})  # type: ignore[misc]  # functional API

Only = Annotated[
    list[ServiceName] | None,
    typer.Option(
        "--only", help=f"Only this service ({', '.join(_NAMES)}; postgres only when named); repeat."
    ),
]
Gguf = Annotated[
    Path | None,
    typer.Option(
        "--gguf",
        help="Serve this GGUF instead of SmolLM2-135M-Instruct.",
        exists=True,
        dir_okay=False,
    ),
]

Cluster = Annotated[
    bool,
    typer.Option(
        "--cluster",
        help="Kafka and Weaviate as three-node clusters: brokers from "
        "FACTSTREAM_KAFKA_BOOTSTRAP_SERVERS (three), Weaviate on three consecutive ports "
        "(docs/operations.md, A local cluster).",
    ),
]


def print_status(rows: Sequence[ServiceStatus]) -> None:
    """A table of the local services: state, endpoint, pid, log."""
    table = Table("service", "state", "endpoint", "pid", "log")
    for row in rows:
        table.add_row(row.name, row.state.value, row.endpoint, str(row.pid or "-"), row.log)
    console.print(table, soft_wrap=True)


def _settings(gguf: Path | None) -> Settings:
    settings = load_settings()
    if gguf is None:
        return settings
    local = settings.local.model_copy(update={"gguf": gguf.resolve()})
    return settings.model_copy(update={"local": local})


@services_app.command("up")
def services_up(only: Only = None, gguf: Gguf = None, cluster: Cluster = False) -> None:
    """Provision (first run: downloads and builds) and start the services; reuse running ones."""
    settings = _settings(gguf)
    console.print(cache_banner(settings.local.cache_dir))
    with console_progress(console) as progress:
        rows = manager.up(settings, only or manager.SERVICE_NAMES, progress, cluster=cluster)
    print_status(rows)


@services_app.command("provision")
def services_provision(only: Only = None) -> None:
    """Download and build the services (first run: ~10 minutes) without starting them."""
    settings = load_settings()
    console.print(cache_banner(settings.local.cache_dir))
    with console_progress(console) as progress:
        manager.provision(settings, only or manager.SERVICE_NAMES, progress)
    console.print("provisioned")


@services_app.command("down")
def services_down(only: Only = None, cluster: Cluster = False) -> None:
    """Stop the services this cache folder started; services started elsewhere are left alone."""
    print_status(manager.down(load_settings(), only or _NAMES, cluster=cluster))


@services_app.command("status")
def services_status(only: Only = None, cluster: Cluster = False) -> None:
    """Report each service: started by us, external, remote, or stopped."""
    names = only or _NAMES
    print_status(manager.status(load_settings(), names, cluster=cluster))


@services_app.command("check")
def services_check() -> None:
    """Bring the local stack up and show a round trip through each service."""
    from factstream_lab.stack.check import run_round_trips

    settings = load_settings()
    with console_progress(console) as progress:
        rows = manager.up(settings, progress=progress)
    print_status(rows)
    for trip in asyncio.run(run_round_trips(settings)):
        console.rule(f"[bold]{trip.service}[/] ({trip.seconds:.2f}s)")
        console.print(f"sent:     {trip.sent}", soft_wrap=True, markup=False)
        console.print(f"received: {trip.received}", soft_wrap=True, markup=False)
