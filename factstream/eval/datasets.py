"""CLARK-News as the evaluations read it: documents in stream order, triples, object changes."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

__all__ = ["Change", "Clark", "ClarkDocument", "Triple", "load_clark", "verbalise"]


@dataclass(frozen=True)
class ClarkDocument:
    id: str
    text: str
    timestamp: datetime
    position: int  # order in the stream (timestamp, then file order)

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


def load_clark(data_dir: Path) -> Clark:
    """Read documents.jsonl and triples.jsonl of a CLARK-News folder."""
    raw = _jsonl(data_dir / "documents.jsonl")
    raw.sort(key=lambda d: str(d["timestamp"]))  # stable: same-day documents keep file order
    documents = {
        str(d["id"]): ClarkDocument(
            str(d["id"]), str(d["text"]), datetime.fromisoformat(str(d["timestamp"])), pos
        )
        for pos, d in enumerate(raw)
    }
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
