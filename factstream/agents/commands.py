"""The agents' top-level commands: ``worker`` runs them; ``ask`` answers one question in-process."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from factstream.config import load_settings
from factstream.console import (
    ValidFromOption,
    ValidToOption,
    console,
    history_line,
    utc,
    valid_option,
)

if TYPE_CHECKING:
    from factstream.ask.query import AskResult

__all__ = ["agents_app"]

agents_app = typer.Typer()


@agents_app.command()
def worker(
    loglevel: Annotated[str, typer.Option(help="Log level.")] = "info",
) -> None:
    """Run the stream worker: the editor agent on factstream.documents (Ctrl-C stops it)."""
    from factstream.agents.worker import run_worker

    run_worker(load_settings(), loglevel=loglevel)


@agents_app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question.")],
    namespace: Annotated[str, typer.Option("--namespace", "-n", help="The knowledge base.")],
    as_of: Annotated[
        datetime | None, typer.Option("--as-of", help="Answer as of this time (RFC 3339).")
    ] = None,
    choices: Annotated[
        list[str] | None, typer.Option("--choices", help="A possible answer; repeat.")
    ] = None,
    top_k: Annotated[int | None, typer.Option("--top-k", min=1, help="Facts to use.")] = None,
    valid_at: Annotated[
        datetime | None,
        typer.Option(
            "--valid-at",
            help="Facts that held in the world at this time (RFC 3339); without it (or "
            "--valid-from/--valid-to), a time the question names, else now.",
        ),
    ] = None,
    valid_from: ValidFromOption = None,
    valid_to: ValidToOption = None,
    mode: Annotated[
        str | None,
        typer.Option(
            "--mode",
            help="single, multi_hop (planned hops, each anchored on the previous hop's "
            "entity) or auto (multi_hop for a question of two hops or more); default "
            "FACTSTREAM_API_MODE.",
        ),
    ] = None,
) -> None:
    """Answer a question from a namespace's facts (in-process, as POST /v1/ask does)."""
    from factstream.ask.query import AskRequest, QueryEngine
    from factstream.clients import open_clients

    valid = valid_option(valid_at, valid_from, valid_to)
    if mode not in (None, "single", "multi_hop", "auto"):
        raise typer.BadParameter(f"--mode is single, multi_hop or auto, not {mode!r}")
    settings = load_settings()
    request = AskRequest(
        question,
        namespace,
        utc(as_of),
        top_k,
        choices,
        valid,
        mode,  # type: ignore[arg-type]
    )

    async def run() -> AskResult:
        async with open_clients(settings) as clients:
            engine = QueryEngine.of(clients, settings)
            return await engine.ask(request)

    result = asyncio.run(run())
    table = Table("score", "true", "fact", "valid", "history")
    for used in result.facts:
        table.add_row(
            f"{used.score:.3f}",
            str(used.truth),
            used.fact.text,
            used.valid.describe(),
            history_line(used.fact),
        )
    console.print(table)
    if result.valid_time is not None:
        source = result.valid_time.source.value
        console.print(f"valid time ({source}): {result.valid_time.describe()}", markup=False)
        plan = result.valid_time.plan
        if plan is not None and result.valid_time.source.value != "plan":
            console.print(f"time plan not used ({plan.outcome}): {plan.reason}", markup=False)
    for number, hop in enumerate(result.hops, start=1):
        cited = "; ".join(f.fact.text for f in hop.facts) or "(no facts)"
        console.print(
            f"hop {number}: {hop.question} -> {hop.answer or '(nothing)'} "
            f"[{hop.seconds * 1000:.0f} ms, {hop.pruned} pruned] {cited}",
            markup=False,
        )
    checked = "" if result.confidence is None else f", confidence {result.confidence:g}"
    console.print(f"mode {result.mode}, rounds {result.rounds}{checked}", markup=False)
    timings = ", ".join(f"{stage} {seconds:.2f}s" for stage, seconds in result.timings.items())
    console.print(f"[bold]answer:[/] {result.answer}")
    console.print(f"reasoning: {result.reasoning}", markup=False)
    console.print(f"model {result.model} ({result.prompt}); {timings}", markup=False)
