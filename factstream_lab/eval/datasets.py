"""CLARK-News as the evaluations read it: documents in stream order, triples, object changes.

A generated world (``factstream world generate``, docs/world.md) has the same files; its
documents are conversation chunks whose ``turns`` make the text where it has none.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from factstream.topics.records import Turn, render_turns

__all__ = ["Change", "Clark", "ClarkDocument", "Triple", "load_clark", "verbalise"]


@dataclass(frozen=True)
class ClarkDocument:
    id: str
    text: str
    timestamp: datetime
    position: int  # order in the stream (timestamp, then file order)
    kind: str = "article"
    turns: tuple[tuple[str, str], ...] = ()  # a conversation chunk's (speaker, text)
    title: str | None = None
    source: str | None = None

    @property
    def stream_time(self) -> datetime:
        """The timestamp, made strictly increasing: same-day documents keep their order."""
        return self.timestamp + timedelta(microseconds=self.position)


@dataclass(frozen=True)
class Triple:
    index: int
    subject: str
    relation: str
    object: str
    valid_from: str | None
    document_id: str
    valid_to: str | None = None


@dataclass(frozen=True)
class Change:
    """An object that changes: ``stale`` held until the document of ``new`` said otherwise."""

    stale: Triple
    new: Triple


@dataclass(frozen=True)
class Clark:
    documents: dict[str, ClarkDocument]
    triples: list[Triple]

    def changes(self) -> list[Change]:
        """Each change of a (subject, relation)'s object whose new document is shipped."""
        chains: dict[tuple[str, str], list[Triple]] = defaultdict(list)
        for triple in self.triples:
            chains[(triple.subject, triple.relation)].append(triple)
        found = []
        for chain in chains.values():
            chain.sort(key=lambda t: t.valid_from or "")
            for old, new in zip(chain, chain[1:], strict=False):
                if old.object != new.object and new.document_id in self.documents:
                    found.append(Change(old, new))
        return found


def verbalise(triple: Triple) -> str:
    """A triple as a natural-language fact: ``subject relation object.``"""
    return f"{triple.subject} {triple.relation} {triple.object}."


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _document(raw: dict[str, Any], position: int) -> ClarkDocument:
    turns = tuple((str(t["speaker"]), str(t["text"])) for t in raw.get("turns") or ())
    text = raw.get("text") or render_turns([Turn(speaker=s, text=t) for s, t in turns])
    when = datetime.fromisoformat(str(raw["timestamp"]))
    kind = str(raw.get("kind", "article"))
    title, source = raw.get("title"), raw.get("source")
    return ClarkDocument(
        str(raw["id"]),
        str(text),
        when,
        position,
        kind,
        turns,
        None if title is None else str(title),
        None if source is None else str(source),
    )


def load_clark(data_dir: Path) -> Clark:
    """Read documents.jsonl and triples.jsonl of a CLARK-News folder."""
    raw = _jsonl(data_dir / "documents.jsonl")
    raw.sort(key=lambda d: str(d["timestamp"]))  # stable: same-day documents keep file order
    documents = {str(d["id"]): _document(d, pos) for pos, d in enumerate(raw)}
    triples = [
        Triple(
            i,
            str(t["subject"]),
            str(t["relation"]),
            str(t["object"]),
            t.get("valid_from"),
            str(t["document_id"]),
            t.get("valid_to"),
        )
        for i, t in enumerate(_jsonl(data_dir / "triples.jsonl"))
    ]
    return Clark(documents, triples)
