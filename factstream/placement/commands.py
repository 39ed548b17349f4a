"""``factstream placement``: plan the namespace placement map, show where namespaces go."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer
from rich.table import Table

from factstream.config import load_settings
from factstream.console import console

if TYPE_CHECKING:
    from factstream.placement.propose import Source

__all__ = ["placement_app"]

placement_app = typer.Typer(
    help="The namespace placement map: which documents partition each namespace goes to.",
    no_args_is_help=True,
)


@placement_app.command("plan")
def plan_command(
    source: Annotated[
        str,
        typer.Option(
            help="Where the observed volume comes from: documents (every record on the "
            "documents topic), changelog (documents that made edits), none (only --volume)."
        ),
    ] = "documents",
    volume: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            dir_okay=False,
            help='Expected documents per namespace, JSON {"namespace": count}; replaces the '
            "observed count of the namespaces it names (plan namespaces before they go live).",
        ),
    ] = None,
    partitions: Annotated[
        int | None,
        typer.Option(min=1, help="Partitions to plan for; default: the documents topic's."),
    ] = None,
    move: Annotated[
        bool,
        typer.Option(
            "--move",
            help="Also move namespaces already placed, except those on a partition the "
            "workers have not read to the end (their order would break).",
        ),
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option(dir_okay=False, help="Write here; default FACTSTREAM_KAFKA_PLACEMENT_FILE."),
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the plan; write nothing.")] = (
        False
    ),
) -> None:
    """Propose a map that spreads the documents evenly over the partitions, and write it.

    Namespaces already placed (in the current map, or seen on the documents topic) keep
    their partition unless --move; publishers read the map when they start (see
    docs/operations.md, "Namespace placement", for how to roll a new map out safely).
    """
    from factstream.placement.propose import propose

    if source not in ("documents", "changelog", "none"):
        raise typer.BadParameter(f"source {source!r}: documents, changelog or none")
    settings = load_settings()
    target = out or settings.kafka.placement_file
    if target is None and not dry_run:
        raise typer.BadParameter("set FACTSTREAM_KAFKA_PLACEMENT_FILE or give --out")
    proposal = asyncio.run(
        propose(
            settings.kafka,
            settings.worker,
            source=cast("Source", source),  # checked above
            volume_file=volume,
            partitions=partitions,
            move=move,
        )
    )
    plan = proposal.plan
    table = Table("partition", "documents now", "planned", "namespaces planned")
    mapped = proposal.plan.placement.namespaces
    for p, (now, after) in enumerate(zip(plan.before, plan.after, strict=True)):
        table.add_row(str(p), str(now), str(after), str(sum(1 for v in mapped.values() if v == p)))
    console.print(table)
    held = f" ({proposal.held} for documents unread on their partition)" if move else ""
    console.print(
        f"{plan.kept} namespaces kept where they are{held}, {plan.placed} placed; busiest "
        f"partition over the mean: {plan.imbalance(plan.before)} now, "
        f"{plan.imbalance(plan.after)} planned"
    )
    if dry_run or target is None:
        return
    plan.placement.save(target)
    console.print(f"written: {target}")


@placement_app.command("show")
def show(
    namespaces: Annotated[list[str], typer.Argument(help="Namespaces to look up.")],
) -> None:
    """The documents partition each namespace goes to (mapped, or hashed by its key):
    what a publisher outside factstream must send to, with the key set to the namespace."""
    from factstream.placement.propose import topic_count
    from factstream.streams.placement import Placement

    settings = load_settings()
    placement = Placement.load(settings.kafka.placement_file)
    count = asyncio.run(topic_count(settings.kafka, settings.worker))
    for namespace in namespaces:
        how = "mapped" if placement.pinned(namespace, count) is not None else "hashed"
        typer.echo(f"{namespace}\t{placement.partition(namespace, count)}\t{how}")
