"""``factstream api``: serve the HTTP API; ``factstream api hash-key``: hash an API key."""

from __future__ import annotations

from typing import Annotated

import typer

from factstream.config import load_settings
from factstream.console import console, print_error

__all__ = ["api_app"]

api_app = typer.Typer(
    help="The HTTP API: `factstream api` serves it; `factstream api hash-key` hashes a key.",
    invoke_without_command=True,
)


@api_app.callback()
def api(
    ctx: typer.Context,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
) -> None:
    """Serve the HTTP API (/v1/ask, /v1/facts, /v1/documents, /docs) on FACTSTREAM_API_HOST."""
    if ctx.invoked_subcommand is not None:
        return
    from factstream.api.server import check_serving, run_api

    settings = load_settings()
    try:
        banner = check_serving(settings.api)
    except ValueError as exc:
        print_error(exc)
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
