"""The laboratory's top-level commands: ``demo`` (the main job) and ``up`` (the whole stack)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from factstream.config import load_settings
from factstream.console import console, history_line
from factstream_lab.provenance import stamped
from factstream_lab.stack.commands import print_status

__all__ = ["lab_app"]

lab_app = typer.Typer()


@lab_app.command()
def demo(
    data: Annotated[
        Path | None, typer.Option(exists=True, dir_okay=False, help="Documents (JSON Lines).")
    ] = None,
    results: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False,
            help="Write the run's figures here (JSON); default <cache>/demo/<namespace>.json.",
        ),
    ] = None,
) -> None:
    """The main job: stack up, worker on, CLARK-News documents edited in, the story told."""
    import json
    import time
    from concurrent.futures import ThreadPoolExecutor

    from rich.progress import Progress

    from factstream.mirror.store import RoundResult
    from factstream_lab.demo.embed_prep import start_onnx_export
    from factstream_lab.demo.mirror import mirror_lines
    from factstream_lab.demo.phases import Phases, first_run_lines, goal_figures, make_started
    from factstream_lab.demo.run import DEFAULT_DEMO_DATA, log_to_file, run_demo
    from factstream_lab.demo.story import story_lines
    from factstream_lab.demo.summary import lm_line, outcome_line
    from factstream_lab.stack import manager
    from factstream_lab.stack.progress import cache_banner, console_progress

    demo_started, began = time.time(), make_started()
    settings, data = load_settings(), data or DEFAULT_DEMO_DATA
    namespace = f"demo-{datetime.now(UTC):%Y%m%d-%H%M%S}"
    log = log_to_file(settings.local.cache_dir / "logs" / "demo.log")
    console.print(cache_banner(settings.local.cache_dir))
    with console_progress(console) as progress:
        # The embedding model's export beside the builds, not in the editing time; the
        # pool's exit waits for it.
        with ThreadPoolExecutor(1, thread_name_prefix="onnx-export") as pool:
            start_onnx_export(settings, progress, pool)
            # PostgreSQL too: the mirror runs beside the worker.
            names = [*manager.SERVICE_NAMES, "postgres"]
            rows = manager.up(settings, names, progress=progress)
        steps = tuple(progress.timings)
    print_status(rows)
    services_ready = time.time()
    with data.open("rb") as file:
        total = sum(1 for line in file if line.strip())
    with Progress(console=console) as bar:
        task = bar.add_task(f"editing {total} documents into {namespace}", total=total)
        mirrored = bar.add_task("edits mirrored into PostgreSQL", total=None)

        def each_round(round_: RoundResult, lag: int) -> None:
            bar.advance(mirrored, round_.edits)

        result = asyncio.run(
            run_demo(
                settings, data, namespace, lambda n: bar.advance(task, n), on_mirror=each_round
            )
        )
    table = Table("true", "fact", "history")
    for fact in sorted(result.facts, key=lambda f: f.first_seen):
        table.add_row(str(fact.truth), fact.text, history_line(fact))
    console.print(table)
    ops = ", ".join(f"{op} {n}" for op, n in sorted(result.ops.items())) or "none"
    console.print(
        f"{result.published.published} documents in {result.seconds:.0f}s; {len(result.facts)} "
        f"facts ({sum(f.truth for f in result.facts)} true); edits by op: {ops}",
        markup=False,
    )
    console.print(outcome_line(result.outcomes, result.dead_letters), markup=False)
    if result.dead_letters:
        console.print(
            f"  see them: factstream dlq list -n {namespace}; replay them: "
            f"factstream dlq replay --all -n {namespace}",
            markup=False,
        )
    console.print(lm_line(result.lm, result.published.published), markup=False)
    console.print(f"worker log: {result.worker_log}; demo log: {log}", markup=False)
    for line in story_lines(result.story):
        console.print(line, markup=False, soft_wrap=True)
    audit = result.audit
    console.print(
        f"Audit of the kept facts (stricter than the check): {audit.flagged_documents} of "
        f"{audit.documents_with_facts} documents with kept facts flagged",
        markup=False,
    )
    for flagged in audit.flagged:
        flags = "; ".join(f"{f.kind} {f.detail!r}" for f in flagged.flags)
        console.print(f"  {flagged.document_id}: {flagged.text!r}: {flags}", markup=False)
    if result.mirror is not None:
        for line in mirror_lines(result.mirror):
            console.print(line, markup=False, soft_wrap=True)
    path = results or settings.local.cache_dir / "demo" / f"{namespace}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    figures = result.to_json(settings.lm.model, data)
    phases = Phases(began, demo_started, services_ready, time.time(), steps)
    figures["first_run"] = phases.to_json()
    figures["goals"] = goal_figures(figures)
    for line in first_run_lines(figures["first_run"], figures["goals"]):
        console.print(line, markup=False, soft_wrap=True)
    path.write_text(json.dumps(stamped(figures), indent=2, default=str) + "\n")
    console.print(f"figures: {path}", markup=False)
    console.print(
        f"[bold]Model: {settings.lm.model}.[/] The default SmolLM2-135M follows the output "
        "formats but not the meaning: its facts and labels are not to be trusted. Point "
        "FACTSTREAM_LM_URL at vLLM with a real model for real edits."
    )


@lab_app.command()
def up() -> None:
    """The whole local stack in the foreground: services, worker, API (and feeds); Ctrl-C stops."""
    from factstream_lab.up import run_up

    code = run_up(load_settings(), lambda line: console.print(line, markup=False, soft_wrap=True))
    raise typer.Exit(code=code)
