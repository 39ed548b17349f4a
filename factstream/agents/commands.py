"""The agents' top-level commands: ``worker`` runs them; ``ask`` answers one question in-process."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from factstream.config import load_settings
from factstream.console import console, history_line, utc

if TYPE_CHECKING:
    from factstream.knowledge.query import AskResult

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
) -> None:
    """Answer a question from a namespace's facts (in-process, as POST /v1/ask does)."""
    from factstream.clients import open_clients
    from factstream.knowledge.query import AskRequest, QueryEngine

    settings = load_settings()
    request = AskRequest(question, namespace, utc(as_of), top_k, choices)

    async def run() -> AskResult:
        async with open_clients(settings) as clients:
            engine = QueryEngine(
                clients.store,
                clients.embedder,
                clients.runner,
                settings.api,
                alpha=settings.editor.alpha,
            )
            return await engine.ask(request)

    result = asyncio.run(run())
    table = Table("score", "true", "fact", "history")
    for used in result.facts:
        table.add_row(f"{used.score:.3f}", str(used.truth), used.fact.text, history_line(used.fact))
    console.print(table)
    timings = ", ".join(f"{stage} {seconds:.2f}s" for stage, seconds in result.timings.items())
    console.print(f"[bold]answer:[/] {result.answer}")
    console.print(f"reasoning: {result.reasoning}", markup=False)
    console.print(f"model {result.model} ({result.prompt}); {timings}", markup=False)
