"""``factstream world``: generate a seeded world of conversations, triples and questions."""

from __future__ import annotations

import asyncio
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from factstream.console import console

if TYPE_CHECKING:
    from factstream_lab.world.generate import World
    from factstream_lab.world.lm_render import RenderCounts

__all__ = ["Render", "world_app"]


class Render(StrEnum):
    """Who says the turns that state facts: the templates, or the configured LM (checked)."""

    TEMPLATES = "templates"
    LM = "lm"


world_app = typer.Typer(help="Generated worlds: conversations about a changing world.")


@world_app.command("generate")
def world_generate(
    out: Annotated[Path, typer.Option(help="Folder for the files (created).")],
    seed: Annotated[int, typer.Option(help="Everything follows from it.")] = 0,
    people: Annotated[int, typer.Option(min=2, max=25, help="People in the world.")] = 5,
    steps: Annotated[int, typer.Option(min=0, help="Steps of the Markov chain.")] = 4,
    changes: Annotated[int, typer.Option(min=1, max=8, help="Transitions per step.")] = 2,
    step_days: Annotated[int, typer.Option(min=1, help="Days between steps.")] = 30,
    turns_per_chunk: Annotated[int, typer.Option(min=1, help="Turns per document.")] = 4,
    render: Annotated[
        Render,
        typer.Option(
            help="templates: reproducible per seed. lm: the configured LM (FACTSTREAM_LM_*) "
            "rewords each turn that states facts; a turn failing the check keeps its template."
        ),
    ] = Render.TEMPLATES,
) -> None:
    """Write documents.jsonl, triples.jsonl, questions.jsonl (CLARK-News' format) and README.md."""
    from factstream_lab.world.generate import WorldConfig, generate_world, write_world

    config = WorldConfig(seed, people, steps, changes, step_days, turns_per_chunk)
    world = generate_world(config)
    if render is Render.LM:
        world, counts = asyncio.run(_render_with_lm(world))
        console.print(
            f"turns stating facts: {counts.rendered} rendered by the LM, "
            f"{counts.kept_template} kept as templates ({counts.refused} refused by the check, "
            f"{counts.failed} LM failures)",
            markup=False,
        )
    write_world(world, out)
    chunks = sum(len(c.chunks) for c in world.conversations)
    console.print(
        f"{len(world.conversations)} conversations in {chunks} documents, "
        f"{len(world.triples)} triples, {len(world.questions)} questions -> {out}",
        markup=False,
    )


async def _render_with_lm(world: World) -> tuple[World, RenderCounts]:
    from factstream.config import load_settings
    from factstream.lm.factory import build_lm
    from factstream.lm.tasks.runner import build_task_runner
    from factstream.metrics import Metrics
    from factstream_lab.world.lm_render import render_world

    settings = load_settings()
    metrics = Metrics.create(None)
    lm = build_lm(settings.lm, settings.local.cache_dir, metrics.lm)
    try:
        return await render_world(world, build_task_runner(settings.lm, lm, metrics.lm))
    finally:
        await lm.aclose()
