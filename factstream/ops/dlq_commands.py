"""``factstream dlq list | show | replay``: the dead letters, for a person to act on."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from factstream.config import load_settings
from factstream.console import console
from factstream.ops.dead_letters import Letter, letter_at, read_letters, replay

__all__ = ["dlq_app"]

dlq_app = typer.Typer(
    help="Dead letters: the documents the worker could not edit in, why, and replaying them.",
    no_args_is_help=True,
)

NamespaceOption = Annotated[
    str | None, typer.Option("--namespace", "-n", help="Only this namespace's dead letters.")
]
CauseOption = Annotated[
    str | None,
    typer.Option(
        "--cause", help="Only dead letters whose cause starts with this ('LM output invalid')."
    ),
]
_REASON_CHARS = 90


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dlq_app.command("list")
def list_letters(
    namespace: NamespaceOption = None,
    cause: CauseOption = None,
    limit: Annotated[int, typer.Option(min=1, help="Show the newest this many.")] = 50,
) -> None:
    """The dead letters (oldest first), and how many there are by cause."""
    letters = asyncio.run(read_letters(load_settings().kafka, namespace, cause))
    if not letters:
        console.print("no dead letters")
        return
    table = Table("ref", "failed at", "namespace", "document", "cause", "reason")
    for letter in letters[-limit:]:
        failed = f"{letter.record.failed_at:%Y-%m-%d %H:%M:%S}"
        table.add_row(
            letter.ref,
            failed,
            escape(letter.namespace or ""),
            escape(letter.document_id or "?"),
            escape(letter.cause),
            escape(_short(letter.record.reason, _REASON_CHARS)),
        )
    console.print(table)
    causes = Counter(letter.cause for letter in letters)
    said = ", ".join(f"{cause} {n}" for cause, n in causes.most_common())
    console.print(f"{len(letters)} dead letters: {said}", markup=False)
    console.print("show one: factstream dlq show REF; replay: factstream dlq replay REF ...")


@dlq_app.command()
def show(
    ref: Annotated[str, typer.Argument(help="PARTITION:OFFSET, as dlq list shows it.")],
) -> None:
    """One dead letter: where its record came from, the whole reason, the record itself."""
    letter = asyncio.run(letter_at(load_settings().kafka, ref))
    record = letter.record
    lines = [
        f"dead letter {letter.ref}, failed at {record.failed_at.isoformat()}",
        f"input:    {record.topic}[{record.partition}]@{record.offset}, key {letter.namespace!r}",
        f"document: {letter.document_id or 'not a readable document'}",
        f"cause:    {letter.cause} ({record.error_type})",
        f"reason:   {record.reason}",
        "record:",
        _pretty(letter.value),
    ]
    for line in lines:
        console.print(line, markup=False, soft_wrap=True)


def _pretty(value: bytes) -> str:
    try:
        return json.dumps(json.loads(value), indent=2, ensure_ascii=False)
    except ValueError:  # not JSON, or not UTF-8: as bytes
        return repr(value)


@dlq_app.command("replay")
def replay_letters(
    refs: Annotated[
        list[str] | None, typer.Argument(help="PARTITION:OFFSET of each to replay.")
    ] = None,
    every: Annotated[
        bool, typer.Option("--all", help="Every dead letter (of --namespace, --cause).")
    ] = False,
    namespace: NamespaceOption = None,
    cause: CauseOption = None,
) -> None:
    """Send dead letters' records to factstream.documents again, under their original keys.

    Safe to repeat: the worker skips a document already edited in.
    """
    if bool(refs) == every:
        raise typer.BadParameter("name the dead letters (REF ...) or give --all")
    settings = load_settings()

    async def run() -> tuple[list[Letter], int]:
        if every:
            letters = await read_letters(settings.kafka, namespace, cause)
        else:
            letters = [await letter_at(settings.kafka, ref) for ref in refs or []]
        return letters, await replay(settings.kafka, settings.worker, letters)

    letters, sent = asyncio.run(run())
    if not sent:
        console.print("no dead letters to replay")
        return
    refs_sent = ", ".join(letter.ref for letter in letters)
    console.print(
        f"replayed {sent} dead letters ({refs_sent}) to factstream.documents", markup=False
    )
    console.print("the worker edits each in once; a document already edited in is skipped")
