"""The laboratory's command line: ``factstream-lab`` and its registration under ``factstream``."""

from __future__ import annotations

import typer

from factstream_lab.commands import lab_app
from factstream_lab.eval.commands import eval_app
from factstream_lab.stack.commands import services_app
from factstream_lab.world.commands import world_app

__all__ = ["main", "register"]


def register(root: typer.Typer) -> None:
    """Add the laboratory's commands to ``root`` (the ``factstream.commands`` entry point)."""
    root.add_typer(lab_app)  # demo, up
    root.add_typer(services_app, name="services")
    root.add_typer(eval_app, name="eval")
    root.add_typer(world_app, name="world")


def main() -> None:
    """Console-script entry point of ``factstream-lab``: the product's root app, errors and all.

    The product's app already carries the laboratory's commands (entry point), so
    ``factstream-lab demo`` and ``factstream demo`` are one command.
    """
    from factstream.cli import app

    app()
