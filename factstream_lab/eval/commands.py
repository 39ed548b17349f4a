"""``factstream eval``: the evaluations on CLARK-News, generated worlds and LoCoMo, tables and
JSON."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from factstream.config import load_settings
from factstream.console import console
from factstream_lab.provenance import stamped

__all__ = ["eval_app"]

eval_app = typer.Typer(help="Evaluations on CLARK-News and generated worlds.", no_args_is_help=True)

Data = Annotated[
    Path,
    typer.Option(exists=True, file_okay=False, help="CLARK-News or a generated world's folder."),
]
JsonOut = Annotated[Path | None, typer.Option("--json", help="Also write the report here.")]


@eval_app.command("floor")
def eval_floor(data: Data, json_out: JsonOut = None) -> None:
    """Calibrate the retrieval similarity floor for the configured embedding model."""
    from factstream.embed.factory import load_embedder
    from factstream_lab.eval.floor import calibrate_floor

    settings = load_settings()

    async def run() -> Any:
        embedder = await load_embedder(settings.embed, settings.local.cache_dir)
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
        json_out.write_text(json.dumps(stamped(dataclasses.asdict(report)), indent=2))


@eval_app.command("subject-check")
def eval_subject_check(
    data: Data,
    demo: Annotated[
        Path | None,
        typer.Option(
            dir_okay=False,
            help="The demo's documents (JSON Lines), scored alone too "
            "(default: deploy/demo/clark-news-40.jsonl, if there).",
        ),
    ] = None,
    json_out: JsonOut = None,
) -> None:
    """Supersessions the subject check passes and wrong invalidations it refuses (no LM)."""
    from factstream_lab.eval.datasets import load_clark
    from factstream_lab.eval.subject_check import demo_ids, evaluate_subject_check

    if demo is None and _DEMO_DOCUMENTS.is_file():
        demo = _DEMO_DOCUMENTS
    ids = demo_ids(demo) if demo is not None else None
    report = evaluate_subject_check(
        load_clark(data), str(data), ids, None if demo is None else str(demo)
    )
    table = Table(
        "test",
        "supersessions passed",
        "in the KB then",
        "wrong refused",
        "demo: passed",
        "demo: wrong refused",
    )
    for v in report.variants:
        table.add_row(
            v.name,
            *(
                _share(s)
                for s in (
                    v.supersessions_passed,
                    v.scored_passed,
                    v.wrong_refused,
                    v.demo_supersessions_passed,
                    v.demo_wrong_refused,
                )
            ),
        )
    console.print(table)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        body = {"created": datetime.now(UTC).isoformat(timespec="seconds"), **report.to_json()}
        json_out.write_text(json.dumps(stamped(body), indent=2) + "\n")
        console.print(f"-> {json_out}", markup=False)


_DEMO_DOCUMENTS = Path("deploy/demo/clark-news-40.jsonl")


def _share(share: Any) -> str:
    return "-" if share.share is None else f"{share.counted}/{share.total} ({share.share:.1%})"


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
    variant: Annotated[
        list[str] | None,
        typer.Option(help="Only the variants of these names (repeat; default: every one)."),
    ] = None,
) -> None:
    """Recall of superseded facts by the editor's retrieval (no LM), per retrieval variant."""
    from rich.progress import Progress

    from factstream.clients import open_clients
    from factstream_lab.eval.datasets import load_clark
    from factstream_lab.eval.retrieval import (
        KS,
        evaluate_update_retrieval,
        load_facts,
        retrieval_variants,
    )

    settings, clark = load_settings(), load_clark(data)
    kb = "edited" if edited else "stream"
    namespace = f"eval-retrieval-{datetime.now(UTC):%Y%m%d%H%M%S}"
    configs = [c for c in retrieval_variants(settings.editor) if not variant or c.name in variant]
    if not configs:
        raise typer.BadParameter(f"no variant named {variant}")

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
        rows = [{**dataclasses.asdict(r), "kb": kb, "data": data.name} for r in reports]
        json_out.write_text(json.dumps(stamped(rows), indent=2))


@eval_app.command("temporal")
def eval_temporal(
    data: Data,
    out: Annotated[Path, typer.Option(help="Where the results and plot go.")] = Path(
        "eval-results"
    ),
    lm: Annotated[
        bool, typer.Option("--lm", help="Answer with the LM: exact match per --method.")
    ] = False,
    method: Annotated[
        list[str], typer.Option(help="With --lm: erase or rag; repeat to run both.")
    ] = ["erase"],  # noqa: B006 - typer reads the default, nothing mutates it
    limit: Annotated[
        int | None, typer.Option(min=1, help="With --lm: only the first N questions.")
    ] = None,
) -> None:
    """Valid time: is the fact that held on the day asked about ranked first (no LM), or,
    with --lm, does the LM answer with it?"""
    if lm:
        _eval_temporal_lm(data, out, method, limit)
        return
    from rich.progress import Progress

    from factstream_lab.eval.temporal import run_temporal_eval
    from factstream_lab.eval.temporal_questions import Position

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


def _eval_temporal_lm(data: Path, out: Path, methods: list[str], limit: int | None) -> None:
    from rich.progress import Progress

    from factstream_lab.eval.report import latest_results, plot_exact_match, write_results
    from factstream_lab.eval.temporal_lm import GROUPS, LM_METHODS, run_temporal_lm

    unknown = [m for m in methods if m not in LM_METHODS]
    if unknown:
        raise typer.BadParameter(f"unknown method {unknown[0]!r}; one of {', '.join(LM_METHODS)}")
    settings = load_settings()
    for name in methods:
        with Progress(console=console) as bar:
            task = bar.add_task(f"{name}: asking", total=limit)
            tick = functools.partial(bar.advance, task)
            run = run_temporal_lm(settings, data, name, limit, tick)  # type: ignore[arg-type]
            results = asyncio.run(run)
        path = write_results(out, f"temporal-lm-{name}", results)
        table = Table("questions", "asked", "exact match")
        for group in GROUPS:
            row = results["by_group"][group]
            accuracy = "-" if row["accuracy"] is None else f"{row['accuracy']:.1%}"
            table.add_row(group, str(row["asked"]), accuracy)
        console.print(table)
        console.print(
            f"{name}: {results['correct']}/{results['asked']} correct (chance "
            f"{results['chance']:.1%}), {results['tokens']['total']} LM tokens, "
            f"{results['seconds']['wall']} s -> {path}",
            markup=False,
        )
    title = "CLARK-News dated questions: exact match per method"
    plot = plot_exact_match(
        latest_results(out, "temporal-lm"), out / "temporal-lm.png", title, GROUPS
    )
    console.print(f"plot: {plot}", markup=False)


Methods = Annotated[
    list[str],
    typer.Option(help="erase, fact-rag or rag; repeat to run several, one after the other."),
]
LmUrl = Annotated[
    str | None, typer.Option(help="Any OpenAI-compatible server, e.g. vLLM on a GPU.")
]
Out = Annotated[Path, typer.Option(help="Where results JSON and the plot go.")]


@eval_app.command("clark")
def eval_clark(
    data: Data,
    method: Methods = ["erase"],  # noqa: B006 - typer reads the default, nothing mutates it
    limit: Annotated[
        int | None, typer.Option(min=1, help="Stream only the first N documents (quick runs).")
    ] = None,
    lm_url: LmUrl = None,
    out: Out = Path("eval-results"),
    seed: Annotated[int, typer.Option(help="Seed of the unchanged-question sample.")] = 0,
) -> None:
    """The ERASE paper's protocol: stream through the worker, ask at the checkpoints, score."""
    _run_protocol(data, method, out, limit, seed, lm_url, "clark")


@eval_app.command("convo")
def eval_convo(
    seed: Annotated[int, typer.Option(help="The world's seed (and the question sample's).")] = 0,
    people: Annotated[int, typer.Option(min=2, max=25, help="People in the world.")] = 5,
    steps: Annotated[int, typer.Option(min=0, help="Steps of the world's chain.")] = 4,
    changes: Annotated[int, typer.Option(min=1, max=8, help="Transitions per step.")] = 2,
    data: Annotated[
        Path | None,
        typer.Option(file_okay=False, help="A generated world's folder (default: generate one)."),
    ] = None,
    method: Methods = ["erase"],  # noqa: B006 - typer reads the default, nothing mutates it
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N documents.")] = None,
    lm_url: LmUrl = None,
    out: Out = Path("eval-results"),
) -> None:
    """The same protocol on a generated world of conversations (factstream world generate)."""
    from factstream_lab.world.generate import WorldConfig, generate_world, write_world

    if data is None:
        data = out / f"world-{seed}-{people}p-{steps}s-{changes}c"
        write_world(generate_world(WorldConfig(seed, people, steps, changes)), data)
        console.print(f"world: {data}", markup=False)
    _run_protocol(data, method, out, limit, seed, lm_url, "convo")


def _run_protocol(
    data: Path,
    methods: list[str],
    out: Path,
    limit: int | None,
    seed: int,
    lm_url: str | None,
    kind: str,
) -> None:
    """Run each method on ``data`` through a real worker; tables, JSON and the plot."""
    from factstream_lab.eval.clark import METHODS, ClarkRun, run_clark
    from factstream_lab.eval.progress import RichProgress
    from factstream_lab.eval.report import latest_results, plot_accuracy, write_results

    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise typer.BadParameter(f"unknown method {unknown[0]!r}; one of {', '.join(METHODS)}")
    for name in methods:
        run = ClarkRun(data, name, out, limit, seed, lm_url, kind=kind)  # type: ignore[arg-type]
        with RichProgress(console, name) as progress:
            results = asyncio.run(run_clark(run, progress))
        path = write_results(out, f"{kind}-{results['run']}", results)
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
    title = "CLARK-News" if kind == "clark" else "conversations"
    plot = plot_accuracy(latest_results(out, kind), out / f"{kind}-accuracy.png", title)
    console.print(f"plot: {plot}")


@eval_app.command("multihop")
def eval_multihop(
    data: Data,
    out: Annotated[Path, typer.Option(help="Where multihop.json and multihop.png go.")] = Path(
        "eval-results"
    ),
    text_only: Annotated[
        bool,
        typer.Option(
            "--text-only", help="Load the triples without structure (names read from the text)."
        ),
    ] = False,
    lm: Annotated[
        bool,
        typer.Option("--lm", help="Answer with the LM: exact match per --mode, second rounds."),
    ] = False,
    mode: Annotated[
        list[str], typer.Option(help="With --lm: single, multi_hop or auto; repeat.")
    ] = ["single", "multi_hop", "auto"],  # noqa: B006 - typer reads the default only
    limit: Annotated[
        int | None, typer.Option(min=1, help="With --lm: only the first N cases.")
    ] = None,
) -> None:
    """Multi-hop questions of a generated world: chain retrieval recall per hop (no LM), or,
    with --lm, answers in each mode with the self-check."""
    from rich.progress import Progress

    if lm:
        _eval_multihop_lm(data, out, mode, limit)
        return

    from factstream.clients import open_clients
    from factstream_lab.eval.multihop import run_multihop
    from factstream_lab.eval.temporal import retrieval_of

    settings = load_settings()

    async def run() -> Any:
        async with open_clients(settings) as clients:
            with Progress(console=console) as bar:
                task = bar.add_task("hops", total=None)
                return await run_multihop(
                    data,
                    clients.store,
                    clients.embedder,
                    retrieval_of(settings),
                    settings.api.hop_top_k,
                    structured=not text_only,
                    out=out,
                    tick=lambda: bar.advance(task),
                    embed_model=settings.embed.model,
                )

    report = asyncio.run(run())
    table = Table("questions", "hop", "cases", "recall@1", f"recall@{report.hop_top_k}")
    for group, scores in report.by_question_hops.items():
        for s in scores:
            at_1, at_k = f"{s.recall_at_1:.1%}", f"{s.recall_at_k:.1%}"
            table.add_row(group, str(s.hop), str(s.cases), at_1, at_k)
    console.print(
        f"{report.cases} (question, answer) cases of {sum(report.questions.values())} multi-hop "
        f"questions, {report.facts} facts ({report.kb} KB); rules planned {report.planned}; "
        f"chain ends at the answer {report.chain_correct:.1%}; the single retrieval holds the "
        f"last hop's fact in its top {report.retrieval.top_k} "
        f"{report.single_last_hop_in_top_k:.1%}",
        markup=False,
    )
    console.print(table)
    console.print(f"report: {out / 'multihop.json'}, plot: {out / 'multihop.png'}", markup=False)


def _eval_multihop_lm(data: Path, out: Path, modes: list[str], limit: int | None) -> None:
    from rich.progress import Progress

    from factstream_lab.eval.multihop_lm import MODES, plot_multihop_lm, run_multihop_lm
    from factstream_lab.eval.report import write_results

    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise typer.BadParameter(f"unknown mode {unknown[0]!r}; one of {', '.join(MODES)}")
    settings = load_settings()
    with Progress(console=console) as bar:
        task = bar.add_task("asking", total=None)
        run = run_multihop_lm(settings, data, modes, limit, lambda: bar.advance(task))  # type: ignore[arg-type]
        results = asyncio.run(run)
    path = write_results(out, f"multihop-lm-{results['run']}", results)
    plot = plot_multihop_lm(results, out / "multihop-lm.png")
    table = Table("mode", "asked", "exact match", "second rounds", "answered multi_hop", "s/answer")
    for name, row in results["modes"].items():
        table.add_row(
            name,
            str(row["asked"]),
            f"{row['accuracy']:.1%}",
            f"{row['second_round_share']:.1%}",
            str(row["answered_multi_hop"]),
            f"{row['seconds_mean']:.2f}",
        )
    console.print(table)
    console.print(
        f"{results['lm']['model']}: chance {results['chance']:.1%}, "
        f"{results['tokens']['total']} LM tokens -> {path}, plot {plot}",
        markup=False,
    )


async def _locomo_judged(
    run: Any, progress: Any, judge_url: str | None, judge_model: str | None
) -> dict[str, Any]:
    """Run LoCoMo, with a judge LM client open for the run when ``judge_url`` is given."""
    from prometheus_client import CollectorRegistry

    from factstream.lm.factory import build_lm
    from factstream.lm.tasks.runner import build_task_runner
    from factstream.metrics import LMMetrics
    from factstream_lab.eval.locomo.run import run_locomo

    if judge_url is None:
        return await run_locomo(run, progress)
    settings = load_settings()
    judge_lm = settings.lm.model_copy(
        update={"url": judge_url, "model": judge_model or settings.lm.model}
    )
    metrics = LMMetrics.create(CollectorRegistry())
    client = build_lm(judge_lm, settings.local.cache_dir, metrics)
    try:
        judged = dataclasses.replace(run, judge=build_task_runner(judge_lm, client, metrics))
        return await run_locomo(judged, progress)
    finally:
        await client.aclose()


@eval_app.command("locomo")
def eval_locomo(
    data: Annotated[
        Path, typer.Option(exists=True, file_okay=False, help="LoCoMo's folder (*.json).")
    ],
    kb: Annotated[
        list[str] | None,
        typer.Option(help="turns (passages, no worker, no LM) or facts (the worker's); repeat."),
    ] = None,
    conversations: Annotated[
        list[str] | None,
        typer.Option(help="Only these conversations (file stems, e.g. 26 or 26,30); repeat."),
    ] = None,
    sessions: Annotated[
        int | None, typer.Option(min=1, help="Only the first N sessions of each conversation.")
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option(min=1, help="Only the first N documents (chunks) of each conversation."),
    ] = None,
    turns_per_chunk: Annotated[
        int, typer.Option(min=1, help="Turns per conversation document.")
    ] = 8,
    turn_context: Annotated[
        int | None,
        typer.Option(
            min=0, help="Turns KB: turns of the session said before each passage's own, in it."
        ),
    ] = None,
    embed_before: Annotated[
        int,
        typer.Option(
            min=0, help="Turns KB: a passage's vector also of the N turns said before its own."
        ),
    ] = 0,
    embed_after: Annotated[
        int,
        typer.Option(
            min=0, help="Turns KB: a passage's vector also of the N turns said after its own."
        ),
    ] = 0,
    lm_url: LmUrl = None,
    lm: Annotated[
        bool,
        typer.Option(
            "--lm", help="Also answer every question (the configured LM): token F1 per category."
        ),
    ] = False,
    judge_url: Annotated[
        str | None,
        typer.Option(help="With --lm: an OpenAI-compatible server that judges the answers."),
    ] = None,
    judge_model: Annotated[
        str | None, typer.Option(help="The judge's model (default: FACTSTREAM_LM_MODEL).")
    ] = None,
    out: Out = Path("eval-results"),
) -> None:
    """LoCoMo: evidence recall@5/@10 per category of the ask path's retrieval over the turns
    and over the extracted facts, and relative time resolved for temporal questions; with
    --lm, the answers' token F1 per category, and with --judge-url an LM judge's accuracy."""
    from factstream_lab.eval.locomo.kb_turns import DEFAULT_TURN_CONTEXT, EmbedWindow
    from factstream_lab.eval.locomo.report import plot_locomo, table_locomo
    from factstream_lab.eval.locomo.run import KBS, LocomoRun
    from factstream_lab.eval.progress import RichProgress
    from factstream_lab.eval.report import write_results

    chosen = kb or list(KBS)
    unknown = [k for k in chosen if k not in KBS]
    if unknown:
        raise typer.BadParameter(f"unknown knowledge base {unknown[0]!r}; one of {', '.join(KBS)}")
    if judge_url is not None and not lm:
        raise typer.BadParameter("--judge-url judges answers: give --lm too")
    run = LocomoRun(
        data,
        out,
        tuple(dict.fromkeys(chosen)),  # type: ignore[arg-type]
        tuple(c for given in conversations or () for c in given.split(",") if c.strip()),
        sessions,
        limit,
        turns_per_chunk,
        DEFAULT_TURN_CONTEXT if turn_context is None else turn_context,
        EmbedWindow(embed_before, embed_after),
        lm_url,
        answer=lm,
    )
    with RichProgress(console, "locomo") as progress:
        results = asyncio.run(_locomo_judged(run, progress, judge_url, judge_model))
    path = write_results(out, f"locomo-{results['run']}", results)
    plot = plot_locomo(results, out / f"locomo-{results['run']}.png")
    console.print(table_locomo(results))
    console.print(f"results: {path}, plot: {plot}", markup=False)
