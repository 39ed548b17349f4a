"""The `factstream` command line: the root app, its command groups, and its one error handler.

Each subsystem keeps its commands beside it (``ops/commands.py``, ``ops/dlq_commands.py``,
``agents/commands.py``, ``api/commands.py``, ``feeds/commands.py``, ``consumer/commands.py``,
``mirror/commands.py``, ``placement/commands.py``); a FactstreamError from any of them ends here as
``error: <message>`` and exit code 1.

Other packages add commands through the ``factstream.commands`` entry-point group: each entry
names a function that takes a Typer app and registers its commands on it. The laboratory
(``factstream_lab``: ``demo``, ``up``, ``services``, ``eval``, ``world``) registers this way when
it is installed, so the product never imports it. The entry points are loaded when the root
is asked for a command that is not the product's or for the list of all (``_Root``): a
product command starts without importing the laboratory.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import Any

import typer
from typer.core import TyperGroup

from factstream.agents.commands import agents_app
from factstream.api.commands import api_app
from factstream.console import print_error
from factstream.consumer.commands import changelog_app
from factstream.errors import FactstreamError
from factstream.feeds.commands import feeds_app
from factstream.mirror.commands import mirror_app
from factstream.ops.commands import ops_app
from factstream.ops.dlq_commands import dlq_app
from factstream.placement.commands import placement_app

__all__ = ["COMMANDS_GROUP", "app", "main", "register_plugins"]

#: The entry-point group through which other packages register commands on the root app.
COMMANDS_GROUP = "factstream.commands"


class _Root(TyperGroup):
    """The root command: turns a FactstreamError into a clear message and exit code 1, and
    loads the commands other packages register (``factstream.commands``) only when a name
    is not the product's own or every name is listed (``--help``, completion): a product
    command never imports the laboratory."""

    _plugins_loaded = False

    def invoke(self, ctx: Any) -> Any:  # typer's Context type varies with its click
        try:
            return super().invoke(ctx)
        except FactstreamError as exc:
            print_error(exc)
            raise typer.Exit(code=1) from exc

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        found = super().get_command(ctx, cmd_name)
        if found is None and not self._plugins_loaded:
            self._load_plugins()
            found = super().get_command(ctx, cmd_name)
        return found

    def list_commands(self, ctx: Any) -> list[str]:
        self._load_plugins()
        return super().list_commands(ctx)

    def _load_plugins(self) -> None:
        """Add the entry points' commands (the product's own keep their names)."""
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        plugins = typer.Typer()
        register_plugins(plugins)
        if plugins.registered_commands or plugins.registered_groups:
            group = typer.main.get_group(plugins)
            for name, command in group.commands.items():
                self.commands.setdefault(name, command)


app = typer.Typer(
    cls=_Root,
    help="factstream: keep an LM's knowledge current as the world changes.",
    no_args_is_help=True,
)
app.add_typer(ops_app)  # config, publish, facts, rebuild
app.add_typer(agents_app)  # worker, ask
app.add_typer(api_app, name="api")
app.add_typer(feeds_app, name="feeds")
app.add_typer(changelog_app, name="changelog")
app.add_typer(mirror_app, name="mirror")
app.add_typer(placement_app, name="placement")
app.add_typer(dlq_app, name="dlq")


def register_plugins(root: typer.Typer) -> None:
    """Let each installed ``factstream.commands`` entry point add its commands to ``root``."""
    for entry in entry_points(group=COMMANDS_GROUP):
        entry.load()(root)


def main() -> None:
    """Console-script entry point."""
    app()
