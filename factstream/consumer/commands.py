"""``factstream changelog tail``: the changelog's edits, committed transactions only."""

from __future__ import annotations

import asyncio
import sys
from datetime import datetime
from typing import Annotated

import typer

from factstream.config import load_settings
from factstream.console import utc
from factstream.topics.records import EditOp

__all__ = ["changelog_app"]

changelog_app = typer.Typer(
    help="Read the changelog (factstream.fact-edits) as a downstream consumer does.",
    no_args_is_help=True,
)


@changelog_app.command("tail")
def tail(
    namespace: Annotated[
        list[str] | None,
        typer.Option("--namespace", "-n", help="Only this namespace (repeat for more)."),
    ] = None,
    op: Annotated[
        list[EditOp] | None, typer.Option("--op", help="Only edits of this op (repeat).")
    ] = None,
    from_beginning: Annotated[
        bool, typer.Option("--from-beginning", help="Start at the changelog's first record.")
    ] = False,
    since: Annotated[
        datetime | None,
        typer.Option("--since", help="Start at the first record written at or after this time."),
    ] = None,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep waiting for new edits (Ctrl-C ends).")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON record per line (the wire record).")
    ] = False,
) -> None:
    """Print edits in the order written. Without --from-beginning or --since: from the
    beginning, or with --follow only new ones. Without --follow it stops at the end."""
    from factstream.consumer.reader import ChangelogConsumer, Start
    from factstream.consumer.tail import entry_json, entry_line

    if from_beginning and since is not None:
        raise typer.BadParameter("give --from-beginning or --since, not both")
    start: Start = utc(since) or ("latest" if follow and not from_beginning else "earliest")
    show = entry_json if as_json else entry_line
    settings = load_settings()

    async def run() -> int:
        shown = 0
        async with ChangelogConsumer(
            settings.kafka, start=start, namespaces=namespace, ops=op, dedupe_window=0
        ) as changelog:
            async for entries in changelog.polls(to_end=not follow):
                # Partitions arrive one after another: each poll's edits by when they were
                # written (a partition's order is kept: its times never go back).
                for entry in sorted(entries, key=lambda e: (e.timestamp, e.partition, e.offset)):
                    sys.stdout.write(show(entry) + "\n")
                shown += len(entries)
                sys.stdout.flush()
        return shown

    try:
        shown = asyncio.run(run())
    except KeyboardInterrupt:
        return
    if not as_json:
        print(f"{shown} records", file=sys.stderr)
