"""What the command line prints with: one rich console, errors, fact histories,
and the times it reads (``--as-of``, ``--valid-at``, ``--valid-from``/``--valid-to``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape

from factstream.temporal.intervals import ValidInterval, at

if TYPE_CHECKING:
    from factstream.topics.records import Fact

__all__ = [
    "ValidFromOption",
    "ValidToOption",
    "console",
    "history_line",
    "print_error",
    "utc",
    "valid_option",
]

ValidFromOption = Annotated[
    datetime | None,
    typer.Option("--valid-from", help="Facts that held at some time from this one on."),
]
ValidToOption = Annotated[
    datetime | None,
    typer.Option("--valid-to", help="Facts that held at some time before this one."),
]

# Piped or captured, rich would wrap at 80 columns: tables stay whole in logs and tests.
console = Console(width=160) if not Console().is_terminal else Console()


def print_error(error: object) -> None:
    """``error: <what went wrong>``, the first word in bold red."""
    # escape: a message may quote a log's last lines, whose brackets are not markup.
    console.print(f"[bold red]error:[/] {escape(str(error))}")


def history_line(fact: Fact) -> str:
    """``2023-01-01 true (d1 turns D1:2 D1:4), 2023-02-01 false (d2)``: each change and its
    document; the first document's turns the fact was said in, where it cites any."""
    turns = f" turns {' '.join(fact.turn_ids)}" if fact.turn_ids else ""
    return ", ".join(
        f"{h.ts.date().isoformat()} {'true' if h.truth else 'false'} "
        f"({h.document_id}{turns if i == 0 else ''})"
        for i, h in enumerate(fact.history)
    )


def utc(when: datetime | None) -> datetime | None:
    """A time given on the command line; one without a zone is read as UTC."""
    return when.replace(tzinfo=when.tzinfo or UTC) if when else None


def valid_option(
    valid_at: datetime | None, valid_from: datetime | None, valid_to: datetime | None
) -> ValidInterval | None:
    """The valid time of ``--valid-at`` or ``--valid-from``/``--valid-to`` (zoneless: UTC).

    Raises:
        typer.BadParameter: both kinds given, or ``--valid-from`` not before ``--valid-to``.
    """
    if valid_at is not None:
        if valid_from is not None or valid_to is not None:
            raise typer.BadParameter("give --valid-at or --valid-from/--valid-to, not both")
        return at(valid_at.replace(tzinfo=valid_at.tzinfo or UTC))
    start, end = utc(valid_from), utc(valid_to)
    if start is None and end is None:
        return None
    if start is not None and end is not None and start >= end:
        raise typer.BadParameter("--valid-from must be before --valid-to")
    return ValidInterval(start, end)
