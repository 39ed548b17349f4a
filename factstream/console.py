"""What the command line prints with: one rich console, errors, service rows, fact histories."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from factstream.services.manager import ServiceStatus
    from factstream.topics.records import Fact

__all__ = ["console", "history_line", "print_error", "print_status", "utc"]

# Piped or captured, rich would wrap at 80 columns: tables stay whole in logs and tests.
console = Console(width=160) if not Console().is_terminal else Console()


def print_error(error: object) -> None:
    """``error: <what went wrong>``, the first word in bold red."""
    console.print(f"[bold red]error:[/] {error}")


def print_status(rows: Sequence[ServiceStatus]) -> None:
    """A table of the local services: state, endpoint, pid, log."""
    table = Table("service", "state", "endpoint", "pid", "log")
    for row in rows:
        table.add_row(row.name, row.state.value, row.endpoint, str(row.pid or "-"), row.log)
    console.print(table, soft_wrap=True)


def history_line(fact: Fact) -> str:
    """``2023-01-01 true (doc d1), 2023-02-01 false (doc d2)``."""
    return ", ".join(
        f"{h.ts.date().isoformat()} {'true' if h.truth else 'false'} ({h.document_id})"
        for h in fact.history
    )


def utc(when: datetime | None) -> datetime | None:
    """A time given on the command line; one without a zone is read as UTC."""
    return when.replace(tzinfo=when.tzinfo or UTC) if when else None
