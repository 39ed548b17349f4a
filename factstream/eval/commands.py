"""``factstream eval``: the evaluations on CLARK-News, their tables and JSON reports."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from factstream.config import load_settings
from factstream.console import console

__all__ = ["eval_app"]

eval_app = typer.Typer(help="Evaluations on CLARK-News.", no_args_is_help=True)

Data = Annotated[Path, typer.Option(exists=True, file_okay=False, help="CLARK-News folder.")]
JsonOut = Annotated[Path | None, typer.Option("--json", help="Also write the report here.")]


@eval_app.command("floor")
def eval_floor(data: Data, json_out: JsonOut = None) -> None:
    """Calibrate the retrieval similarity floor for the configured embedding model."""
    from factstream.embed.st_embedder import SentenceTransformerEmbedder
    from factstream.eval.floor import calibrate_floor

    settings = load_settings()

    async def run() -> Any:
        embedder = await SentenceTransformerEmbedder.load(settings.embed)
        try:
            return await calibrate_floor(embedder, data)
        finally:
            await embedder.aclose()

    report = asyncio.run(run())
    table = Table("floor", "stale facts kept", "unrelated pairs kept")
    for floor, stale, unrelated in report.rows:
        table.add_row(f"{floor:.2f}", f"{stale:.1%}", f"{unrelated:.1%}")
    console.print(
        f"{settings.embed.model}: {report.pairs} superseded facts, "
        f"{report.unrelated_pairs} unrelated pairs; quantiles {report.stale_quantiles}"
    )
    console.print(table)
    if json_out is not None:
        json_out.write_text(json.dumps(dataclasses.asdict(report), indent=2))


@eval_app.command("update-retrieval")
def eval_update_retrieval(
    data: Data,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N changes.")] = None,
    json_out: JsonOut = None,
    edited: Annotated[
        bool,
        typer.Option(
            "--edited/--stream",
            help="KB as a perfect editor keeps it (superseded facts closed), or every fact "
            "of the stream left true.",
        ),
    ] = False,
) -> None:
    """Recall of superseded facts by the editor's retrieval (no LM), per retrieval variant."""
    from rich.progress import Progress

    from factstream.clients import open_clients
    from factstream.eval.datasets import load_clark
    from factstream.eval.retrieval import (
        KS,
        evaluate_update_retrieval,
        load_facts,
        retrieval_variants,
    )

    settings, clark = load_settings(), load_clark(data)
    kb = "edited" if edited else "stream"
    namespace = f"eval-retrieval-{datetime.now(UTC):%Y%m%d%H%M%S}"
    configs = retrieval_variants(settings.editor)

    async def run() -> Any:
        async with open_clients(settings) as clients:
            try:
                await load_facts(clients.store, clients.embedder, clark, namespace, edited=edited)
                with Progress(console=console) as bar:
                    task = bar.add_task("retrieving", total=None)
                    return await evaluate_update_retrieval(
                        clients.store,
                        clients.embedder,
                        clark,
                        namespace,
                        configs,
                        limit,
                        lambda: bar.advance(task),
                    )
            finally:
                await clients.store.drop_namespace(namespace)

    reports = asyncio.run(run())
    table = Table("retrieval", *(f"recall@{k}" for k in KS), "editor sees", "ms mean / p95")
    for r in reports:
        table.add_row(
            r.config.name,
            *(f"{r.recall_at[k]:.1%}" for k in KS),
            f"{r.editor_recall:.1%}",
            f"{r.ms_mean:.0f} / {r.ms_p95:.0f}",
        )
    console.print(
        f"{reports[0].changes} superseded facts in the KB when superseded "
        f"({reports[0].not_in_kb} more come later in the stream and are left out); "
        f"floor {settings.editor.min_similarity}, top_k {settings.editor.top_k}; KB: {kb}"
    )
    console.print(table)
    if json_out is not None:
        rows = [{**dataclasses.asdict(r), "kb": kb} for r in reports]
        json_out.write_text(json.dumps(rows, indent=2))


@eval_app.command("temporal")
def eval_temporal(
    data: Data,
    out: Annotated[Path, typer.Option(help="Where temporal.json goes.")] = Path("eval-results"),
) -> None:
    """Valid-time retrieval (no LM): is the fact that held on the day asked about ranked first?"""
    from rich.progress import Progress

    from factstream.eval.temporal import run_temporal_eval
    from factstream.eval.temporal_questions import Position

    settings = load_settings()
    with Progress(console=console) as bar:
        task = bar.add_task("asking", total=None)
        report = asyncio.run(run_temporal_eval(settings, data, out, lambda: bar.advance(task)))
    positions = [p.value for p in Position]
    table = Table("mode", "ranked first", f"in top {report.retrieval.top_k}", *positions)
    for score in report.scores:
        table.add_row(
            score.mode.name,
            f"{score.accuracy:.1%}",
            f"{score.recall_at_k:.1%}",
            *(f"{score.by_position[p]['accuracy']:.1%}" for p in positions),
        )
    unusable = ", ".join(f"{n} {why}" for why, n in sorted(report.unusable.items())) or "none"
    asked = ", ".join(f"{report.questions[p]} {p}" for p in positions)
    console.print(
        f"{report.facts} of {report.triples} triples loaded as facts (left out: {unusable}); "
        f"{report.questions['all']} questions ({asked} their interval); "
        f"top_k {report.retrieval.top_k}, floor {report.retrieval.min_similarity}, "
        f"alpha {report.retrieval.alpha}, {report.embed_model}"
    )
    console.print(table)
    console.print(f"report: {out / 'temporal.json'}", markup=False)


@eval_app.command("clark")
def eval_clark(
    data: Data,
    method: Annotated[
        list[str],
        typer.Option(help="erase, fact-rag or rag; repeat to run several, one after the other."),
    ] = ["erase"],  # noqa: B006 - typer reads the default, nothing mutates it
    limit: Annotated[
        int | None, typer.Option(min=1, help="Stream only the first N documents (quick runs).")
    ] = None,
    lm_url: Annotated[
        str | None, typer.Option(help="Any OpenAI-compatible server, e.g. vLLM on a GPU.")
    ] = None,
    out: Annotated[Path, typer.Option(help="Where results JSON and the plot go.")] = Path(
        "eval-results"
    ),
    seed: Annotated[int, typer.Option(help="Seed of the unchanged-question sample.")] = 0,
) -> None:
    """The ERASE paper's protocol: stream through the worker, ask at the checkpoints, score."""
    from factstream.eval.clark import METHODS, ClarkRun, run_clark
    from factstream.eval.progress import RichProgress
    from factstream.eval.report import latest_results, plot_accuracy, write_results

    unknown = [m for m in method if m not in METHODS]
    if unknown:
        raise typer.BadParameter(f"unknown method {unknown[0]!r}; one of {', '.join(METHODS)}")
    for name in method:
        run = ClarkRun(data, name, out, limit, seed, lm_url)  # type: ignore[arg-type]
        with RichProgress(console, name) as progress:
            results = asyncio.run(run_clark(run, progress))
        path = write_results(out, f"clark-{results['run']}", results)
        table = Table("checkpoint", "documents", "asked", "changed", "exact match")
        for cp in results["checkpoints"]:
            accuracy = "-" if cp["accuracy"] is None else f"{cp['accuracy']:.1%}"
            table.add_row(
                f"{cp['share']:.0%}",
                str(cp["documents"]),
                str(cp["asked"]),
                str(cp["changed"]),
                accuracy,
            )
        console.print(table)
        console.print(
            f"{name}: {results['correct']}/{results['asked']} correct, "
            f"{results['tokens']['total']} LM tokens, {results['seconds']['wall']} s -> {path}"
        )
    plot = plot_accuracy(latest_results(out), out / "clark-accuracy.png")
    console.print(f"plot: {plot}")
