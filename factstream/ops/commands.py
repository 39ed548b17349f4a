"""The operator's top-level commands: config, publish, facts, rebuild."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from factstream.config import load_settings
from factstream.console import (
    ValidFromOption,
    ValidToOption,
    console,
    utc,
    valid_option,
)

if TYPE_CHECKING:
    from factstream.ops.rebuild import RebuildReport

__all__ = ["ops_app"]

ops_app = typer.Typer()


@ops_app.command()
def config() -> None:
    """Print every setting: environment variable, default, meaning (Markdown)."""
    from factstream.config import env_var_markdown

    print(env_var_markdown(), end="")


@ops_app.command()
def publish(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="A JSON Lines file.")],
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", help="Publish every document here.")
    ] = None,
) -> None:
    """Publish documents (one JSON object per line) to factstream.documents, in file order."""
    from rich.progress import Progress

    from factstream.ops.publish import publish_file

    settings = load_settings()
    with path.open("rb") as file:
        lines = sum(1 for line in file if line.strip())
    with Progress(console=console) as bar:
        task = bar.add_task(f"publishing {path.name}", total=lines)
        report = asyncio.run(
            publish_file(
                path, settings.kafka, settings.worker, lambda n: bar.advance(task, n), namespace
            )
        )
    for number, reason in report.rejected:
        console.print(f"line {number}: {reason}", markup=False)
    console.print(f"published {report.published}, rejected {len(report.rejected)}")
    if report.rejected:
        raise typer.Exit(code=1)


@ops_app.command()
def facts(
    namespace: Annotated[str, typer.Option("--namespace", "-n", help="The knowledge base.")],
    search: Annotated[str | None, typer.Option(help="Hybrid search for this text.")] = None,
    as_of: Annotated[
        datetime | None, typer.Option("--as-of", help="Facts true at this time (RFC 3339).")
    ] = None,
    valid_at: Annotated[
        datetime | None,
        typer.Option(
            "--valid-at",
            help="Facts that held in the world at this time (RFC 3339); without it (or "
            "--valid-from/--valid-to) no valid-time filter (--search is not read for a time).",
        ),
    ] = None,
    valid_from: ValidFromOption = None,
    valid_to: ValidToOption = None,
    all_facts: Annotated[bool, typer.Option("--all", help="Include false facts.")] = False,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 50,
) -> None:
    """List or search a namespace's facts with their histories and valid intervals."""
    from factstream.clients import open_clients
    from factstream.ops.inspect import fact_table

    valid = valid_option(valid_at, valid_from, valid_to)
    settings = load_settings()

    async def run() -> Table:
        async with open_clients(settings) as clients:
            return await fact_table(
                clients,
                namespace,
                search,
                utc(as_of),
                all_facts,
                limit,
                alpha=settings.api.alpha,
                valid=valid,
            )

    console.print(asyncio.run(run()))


@ops_app.command()
def rebuild(
    namespace: Annotated[
        list[str] | None,
        typer.Option("--namespace", "-n", help="A knowledge base (repeat for more)."),
    ] = None,
    every: Annotated[
        bool, typer.Option("--all", help="Every namespace on the changelog (a lost Weaviate).")
    ] = False,
) -> None:
    """Rebuild namespaces' Weaviate state from the changelog (stop their workers first)."""
    from rich.progress import Progress

    from factstream.clients import open_clients
    from factstream.ops.rebuild import rebuild_namespaces

    if bool(namespace) == every:
        raise typer.BadParameter("name the namespaces (--namespace N ...) or give --all")
    settings = load_settings()

    async def run() -> list[RebuildReport]:
        async with open_clients(settings) as clients:
            with Progress(console=console) as bar:
                task = bar.add_task("rebuilding", total=None)
                return await rebuild_namespaces(
                    clients,
                    settings.kafka,
                    namespace or None,
                    lambda ns, done, total: bar.update(
                        task, description=f"rebuilding {ns}", completed=done, total=total
                    ),
                )

    reports = asyncio.run(run())
    for r in reports:
        done = f"{r.batches} batches, {r.edits} edits, {r.facts} facts"
        console.print(f"rebuilt {r.namespace}: {done}")
    if not reports:
        console.print("the changelog holds no namespace: nothing to rebuild")
