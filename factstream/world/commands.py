"""``factstream world``: generate a seeded world of conversations, triples and questions."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factstream.console import console

__all__ = ["world_app"]

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
) -> None:
    """Write documents.jsonl, triples.jsonl, questions.jsonl (CLARK-News' format) and README.md."""
    from factstream.world.generate import WorldConfig, generate_world, write_world

    config = WorldConfig(seed, people, steps, changes, step_days, turns_per_chunk)
    world = generate_world(config)
    write_world(world, out)
    chunks = sum(len(c.chunks) for c in world.conversations)
    console.print(
        f"{len(world.conversations)} conversations in {chunks} documents, "
        f"{len(world.triples)} triples, {len(world.questions)} questions -> {out}",
        markup=False,
    )
