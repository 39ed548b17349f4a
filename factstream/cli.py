"""The `factstream` command line."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from factstream.config import Settings, load_settings
from factstream.demo import run_round_trips
from factstream.errors import FactstreamError
from factstream.services import manager

__all__ = ["app", "main"]

app = typer.Typer(
    help="factstream: keep an LM's knowledge current as the world changes.", no_args_is_help=True
)
services_app = typer.Typer(
    help="The local stack on 127.0.0.1: Apache Kafka, Weaviate, the LM server.",
    no_args_is_help=True,
)
app.add_typer(services_app, name="services")
console = Console(width=160) if not Console().is_terminal else Console()

ServiceName = StrEnum("ServiceName", {name: name for name in manager.SERVICE_NAMES})  # type: ignore[misc]  # functional API

Only = Annotated[
    list[ServiceName] | None,
    typer.Option("--only", help=f"Only this service ({', '.join(manager.SERVICE_NAMES)}); repeat."),
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


def _settings(gguf: Path | None = None) -> Settings:
    settings = load_settings()
    if gguf is None:
        return settings
    local = settings.local.model_copy(update={"gguf": gguf.resolve()})
    return settings.model_copy(update={"local": local})


def _print_status(rows: Sequence[manager.ServiceStatus]) -> None:
    table = Table("service", "state", "endpoint", "pid", "log")
    for row in rows:
        table.add_row(row.name, row.state.value, row.endpoint, str(row.pid or "-"), row.log)
    console.print(table, soft_wrap=True)


def _fail(exc: FactstreamError) -> typer.Exit:
    console.print(f"[bold red]error:[/] {exc}")
    return typer.Exit(code=1)


@services_app.command("up")
def services_up(only: Only = None, gguf: Gguf = None) -> None:
    """Provision (first run: downloads and builds) and start the services; reuse running ones."""
    settings = _settings(gguf)
    console.print(f"cache: {settings.local.cache_dir}  (first run builds for ~10 minutes)")
    try:
        rows = manager.up(settings, only or manager.SERVICE_NAMES)
    except FactstreamError as exc:
        raise _fail(exc) from exc
    _print_status(rows)


@services_app.command("provision")
def services_provision(only: Only = None) -> None:
    """Download and build the services (first run: ~10 minutes) without starting them."""
    settings = _settings()
    console.print(f"cache: {settings.local.cache_dir}")
    try:
        manager.provision(settings, only or manager.SERVICE_NAMES)
    except FactstreamError as exc:
        raise _fail(exc) from exc
    console.print("provisioned")


@services_app.command("down")
def services_down(only: Only = None) -> None:
    """Stop the services this cache folder started; services started elsewhere are left alone."""
    _print_status(manager.down(_settings(), only or manager.SERVICE_NAMES))


@services_app.command("status")
def services_status(only: Only = None) -> None:
    """Report each service: started by us, external, remote, or stopped."""
    _print_status(manager.status(_settings(), only or manager.SERVICE_NAMES))


@app.command()
def demo() -> None:
    """Bring the local stack up and show a round trip through each service."""
    settings = _settings()
    try:
        _print_status(manager.up(settings))
        trips = asyncio.run(run_round_trips(settings))
    except FactstreamError as exc:
        raise _fail(exc) from exc
    for trip in trips:
        console.rule(f"[bold]{trip.service}[/] ({trip.seconds:.2f}s)")
        console.print(f"sent:     {trip.sent}", soft_wrap=True, markup=False)
        console.print(f"received: {trip.received}", soft_wrap=True, markup=False)
    console.print("\nThe services keep running; stop them with: factstream services down")


def main() -> None:
    """Console-script entry point."""
    app()
