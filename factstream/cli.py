"""The `factstream` command line."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from factstream.config import Settings, load_settings
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
eval_app = typer.Typer(help="Evaluations on CLARK-News.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")
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


@services_app.command("check")
def services_check() -> None:
    """Bring the local stack up and show a round trip through each service."""
    from factstream.services.check import run_round_trips

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


@app.command()
def demo(
    data: Annotated[
        Path | None, typer.Option(exists=True, dir_okay=False, help="Documents (JSON Lines).")
    ] = None,
) -> None:
    """The main job: stack up, worker on, CLARK-News documents edited in, facts shown."""
    from rich.progress import Progress

    from factstream.demo import DEFAULT_DEMO_DATA, run_demo
    from factstream.ops.inspect import history_line

    settings, data = _settings(), data or DEFAULT_DEMO_DATA
    namespace = f"demo-{datetime.now(UTC):%Y%m%d-%H%M%S}"
    try:
        _print_status(manager.up(settings))
        with data.open("rb") as file:
            total = sum(1 for line in file if line.strip())
        with Progress(console=console) as bar:
            task = bar.add_task(f"editing {total} documents into {namespace}", total=total)
            result = asyncio.run(
                run_demo(settings, data, namespace, lambda n: bar.advance(task, n))
            )
    except FactstreamError as exc:
        raise _fail(exc) from exc
    table = Table("true", "fact", "history")
    for fact in sorted(result.facts, key=lambda f: f.first_seen):
        table.add_row(str(fact.truth), fact.text, history_line(fact))
    console.print(table)
    ops = ", ".join(f"{op} {n}" for op, n in sorted(result.ops.items())) or "none"
    console.print(
        f"{result.published.published} documents in {result.seconds:.0f}s; {len(result.facts)} "
        f"facts ({sum(f.truth for f in result.facts)} true); edits by op: {ops}"
    )
    console.print(f"worker log: {result.worker_log}")
    console.print(
        f"[bold]Model: {settings.lm.model}.[/] The default SmolLM2-135M follows the output "
        "formats but not the meaning: its facts and labels are not to be trusted. Point "
        "FACTSTREAM_LM_URL at vLLM with a real model for real edits."
    )


@app.command()
def up() -> None:
    """The whole local stack in the foreground: services, worker, API (and feeds); Ctrl-C stops."""
    from factstream.up import run_up

    try:
        code = run_up(_settings(), lambda line: console.print(line, markup=False, soft_wrap=True))
    except FactstreamError as exc:
        raise _fail(exc) from exc
    raise typer.Exit(code=code)


@app.command()
def config() -> None:
    """Print every setting: environment variable, default, meaning (Markdown)."""
    from factstream.config import env_var_markdown

    print(env_var_markdown(), end="")


@app.command()
def worker(
    loglevel: Annotated[str, typer.Option(help="Log level.")] = "info",
) -> None:
    """Run the stream worker: the editor agent on factstream.documents (Ctrl-C stops it)."""
    from factstream.agents.worker import run_worker

    run_worker(_settings(), loglevel=loglevel)


@app.command()
def publish(
    path: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="A JSON Lines file.")],
    namespace: Annotated[
        str | None, typer.Option("--namespace", "-n", help="Publish every document here.")
    ] = None,
) -> None:
    """Publish documents (one JSON object per line) to factstream.documents, in file order."""
    from rich.progress import Progress

    from factstream.ops.publish import publish_file

    settings = _settings()
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


@app.command()
def facts(
    namespace: Annotated[str, typer.Option("--namespace", "-n", help="The knowledge base.")],
    search: Annotated[str | None, typer.Option(help="Hybrid search for this text.")] = None,
    as_of: Annotated[
        datetime | None, typer.Option("--as-of", help="Facts true at this time (RFC 3339).")
    ] = None,
    all_facts: Annotated[bool, typer.Option("--all", help="Include false facts.")] = False,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 50,
) -> None:
    """List or search a namespace's facts with their histories."""
    from factstream.clients import open_clients
    from factstream.ops.inspect import fact_table

    settings = _settings()
    when = as_of.replace(tzinfo=as_of.tzinfo or UTC) if as_of else None

    async def run() -> Table:
        async with open_clients(settings) as clients:
            return await fact_table(
                clients, namespace, search, when, all_facts, limit, alpha=settings.editor.alpha
            )

    try:
        table = asyncio.run(run())
    except FactstreamError as exc:
        raise _fail(exc) from exc
    console.print(table)


@app.command()
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
    from factstream.ops.rebuild import RebuildReport, rebuild_namespaces

    if bool(namespace) == every:
        raise typer.BadParameter("name the namespaces (--namespace N ...) or give --all")

    settings = _settings()

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

    try:
        reports = asyncio.run(run())
    except FactstreamError as exc:
        raise _fail(exc) from exc
    for r in reports:
        done = f"{r.batches} batches, {r.edits} edits, {r.facts} facts"
        console.print(f"rebuilt {r.namespace}: {done}")
    if not reports:
        console.print("the changelog holds no namespace: nothing to rebuild")


@eval_app.command("floor")
def eval_floor(
    data: Annotated[Path, typer.Option(exists=True, file_okay=False, help="CLARK-News folder.")],
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the report here.")
    ] = None,
) -> None:
    """Calibrate the retrieval similarity floor for the configured embedding model."""
    import dataclasses
    import json

    from factstream.embed.st_embedder import SentenceTransformerEmbedder
    from factstream.eval.floor import calibrate_floor

    settings = _settings()

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
    data: Annotated[Path, typer.Option(exists=True, file_okay=False, help="CLARK-News folder.")],
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N changes.")] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the report here.")
    ] = None,
) -> None:
    """Recall of superseded facts by the editor's retrieval (no LM): hybrid and dense-only."""
    import dataclasses
    import json

    from rich.progress import Progress

    from factstream.clients import open_clients
    from factstream.eval.datasets import load_clark
    from factstream.eval.retrieval import (
        KS,
        evaluate_update_retrieval,
        load_facts,
        retrieval_configs,
    )

    settings, clark = _settings(), load_clark(data)
    namespace = f"eval-retrieval-{datetime.now(UTC):%Y%m%d%H%M%S}"
    configs = retrieval_configs(settings.editor)

    async def run() -> Any:
        async with open_clients(settings) as clients:
            try:
                await load_facts(clients.store, clients.embedder, clark, namespace)
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
    table = Table("retrieval", *(f"recall@{k}" for k in KS), "above floor", "editor sees")
    for r in reports:
        table.add_row(
            r.config.name,
            *(f"{r.recall_at[k]:.1%}" for k in KS),
            f"{r.above_floor:.1%}",
            f"{r.editor_recall:.1%}",
        )
    console.print(
        f"{reports[0].changes} superseded facts in the KB when superseded "
        f"({reports[0].not_in_kb} more come later in the stream and are left out); "
        f"floor {settings.editor.min_similarity}, top_k {settings.editor.top_k}"
    )
    console.print(table)
    if json_out is not None:
        json_out.write_text(json.dumps([dataclasses.asdict(r) for r in reports], indent=2))


@eval_app.command("clark")
def eval_clark(
    data: Annotated[Path, typer.Option(exists=True, file_okay=False, help="CLARK-News folder.")],
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
        try:
            with RichProgress(console, name) as progress:
                results = asyncio.run(run_clark(run, progress))
        except FactstreamError as exc:
            raise _fail(exc) from exc
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


api_app = typer.Typer(
    help="The HTTP API: `factstream api` serves it; `factstream api hash-key` hashes a key.",
    invoke_without_command=True,
)
app.add_typer(api_app, name="api")


@api_app.callback()
def api(
    ctx: typer.Context,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
) -> None:
    """Serve the HTTP API (/v1/ask, /v1/facts, /v1/documents, /docs) on FACTSTREAM_API_HOST."""
    if ctx.invoked_subcommand is not None:
        return
    from factstream.api.server import check_serving, run_api

    settings = _settings()
    try:
        banner = check_serving(settings.api)
    except ValueError as exc:
        console.print(f"[bold red]error:[/] {exc}", markup=True)
        raise typer.Exit(code=1) from exc
    console.print(banner, style="bold yellow" if settings.api.no_auth else None)
    run_api(settings, log_level=log_level)


@api_app.command("hash-key")
def api_hash_key(
    key: Annotated[str, typer.Argument(help="The API key (give it to the client).")],
) -> None:
    """Print a key's SHA-256, the form FACTSTREAM_API_KEYS holds it in."""
    from factstream.access import hash_key

    print(hash_key(key))


@app.command()
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
    from factstream.knowledge.query import AskRequest, AskResult, QueryEngine
    from factstream.ops.inspect import history_line

    settings = _settings()
    when = as_of.replace(tzinfo=as_of.tzinfo or UTC) if as_of else None

    async def run() -> AskResult:
        async with open_clients(settings) as clients:
            engine = QueryEngine(
                clients.store,
                clients.embedder,
                clients.runner,
                settings.api,
                alpha=settings.editor.alpha,
            )
            return await engine.ask(AskRequest(question, namespace, when, top_k, choices))

    try:
        result = asyncio.run(run())
    except FactstreamError as exc:
        raise _fail(exc) from exc
    table = Table("score", "true", "fact", "history")
    for used in result.facts:
        table.add_row(f"{used.score:.3f}", str(used.truth), used.fact.text, history_line(used.fact))
    console.print(table)
    timings = ", ".join(f"{stage} {seconds:.2f}s" for stage, seconds in result.timings.items())
    console.print(f"[bold]answer:[/] {result.answer}")
    console.print(f"reasoning: {result.reasoning}", markup=False)
    console.print(f"model {result.model} ({result.prompt}); {timings}", markup=False)


from factstream.feeds.commands import feeds_app  # noqa: E402

app.add_typer(feeds_app, name="feeds")


def main() -> None:
    """Console-script entry point."""
    app()
