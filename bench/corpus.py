"""Benchmark inputs from CLARK-News: documents, the stub LM's decisions, synthetic facts.

- Documents: the 327 CLARK-News excerpts in stream order, repeated in rounds (each round
  shifted 15 years later, ids made unique) when more are wanted; a namespace takes all
  documents of a subject in a round, so a subject's changes meet in one namespace.
- Stub decisions: extract gives each document the verbalised Wikidata triples it states;
  classify makes a superseded triple's fact outdated in the document that states its
  successor, and rewrites it to the successor there.
- Stated facts: CLARK-News excerpts name their subjects as the article does ("the Duchess
  of Cambridge"), the triples as Wikidata does ("Catherine, Princess of Wales"), so the
  grounding check (factstream.edit.grounding) refuses most facts the stub extracts
  from the bare excerpt. A benchmark document is the excerpt followed by the facts the stub
  extracts from it, so every fact the stub adds or rewrites to is grounded in its document.
- Synthetic facts: a pool of real sentences (document sentences, verbalised triples and
  recombined triples) is embedded once with the real model; fact j is the text of a pair of
  pool sentences ``a b`` with the vector ``normalise(e_a + e_b)`` (for a mean-pooling model
  such as all-MiniLM-L6-v2, close to the embedding of the concatenation).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.harness import REPO
from factstream.prompts.extract_facts import DEFAULT_MAX_FACTS
from factstream.topics.records import Document, DocumentKind, Fact, HistoryEntry
from factstream_lab.eval.datasets import Clark, ClarkDocument, load_clark, verbalise

__all__ = [
    "DEFAULT_DATA",
    "FactPool",
    "clark_facts",
    "load",
    "pool_sentences",
    "questions",
    "stated_text",
    "stream_documents",
    "stub_rules",
]

DEFAULT_DATA = REPO.parent / "shared" / "data" / "clark-news"
_ROUND_SHIFT = timedelta(days=15 * 365)
_KEY_CHARS = 60  # a document is recognised by the start of its text
# Shorter excerpts ("G", "it is verified") are left out: their start is in many documents.
_MIN_CHARS = 20
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def load(data: Path = DEFAULT_DATA) -> Clark:
    """CLARK-News (development split) from ``data``."""
    if not (data / "documents.jsonl").is_file():
        raise FileNotFoundError(f"no CLARK-News at {data} (documents.jsonl); pass --data")
    return load_clark(data)


def _ordered(clark: Clark) -> list[ClarkDocument]:
    return sorted(clark.documents.values(), key=lambda d: d.position)


def _facts_by_document(clark: Clark) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for triple in clark.triples:
        found.setdefault(triple.document_id, []).append(verbalise(triple))
    return found


def _subject_of(clark: Clark) -> dict[str, str]:
    subjects: dict[str, str] = {}
    for triple in clark.triples:
        subjects.setdefault(triple.document_id, triple.subject)
    return subjects


def _bucket(text: str, buckets: int) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % buckets


def _extracted(extract: dict[str, list[str]], text: str) -> list[str]:
    """The facts the stub extracts from ``text`` (tests/fixtures/decisions.py)."""
    return [fact for key, facts in extract.items() if key in text for fact in facts]


def stated_text(clark: Clark, doc: ClarkDocument) -> str:
    """``doc``'s text followed by the facts the stub extracts from it (module docstring)."""
    return _stated(stub_rules(clark)["extract"], doc.text)


def _stated(extract: dict[str, list[str]], text: str) -> str:
    facts = _extracted(extract, text)
    return f"{text}\n\n{' '.join(facts)}" if facts else text


def _usable(clark: Clark) -> list[ClarkDocument]:
    """The documents in stream order, less those the stub would give more facts than the
    extract prompt allows (their text holds several other documents' openings)."""
    extract = stub_rules(clark)["extract"]
    return [
        doc
        for doc in _ordered(clark)
        if len(doc.text) >= _MIN_CHARS and len(_extracted(extract, doc.text)) <= DEFAULT_MAX_FACTS
    ]


def stream_documents(
    clark: Clark, count: int, namespaces: Sequence[str], *, stated: bool = True
) -> list[Document]:
    """``count`` documents in stream order, spread over ``namespaces`` by subject; ``stated``:
    each followed by the facts the stub extracts from it (:func:`stated_text`)."""
    ordered, subjects = _usable(clark), _subject_of(clark)
    extract = stub_rules(clark)["extract"]
    docs = []
    for i in range(count):
        rnd, src = divmod(i, len(ordered))
        clark_doc = ordered[src]
        subject = subjects.get(clark_doc.id, clark_doc.id)
        namespace = namespaces[(_bucket(subject, len(namespaces)) + rnd) % len(namespaces)]
        docs.append(
            Document(
                id=f"b{i:06d}-{clark_doc.id}",
                namespace=namespace,
                kind=DocumentKind.ARTICLE,
                timestamp=clark_doc.stream_time + rnd * _ROUND_SHIFT,
                text=_stated(extract, clark_doc.text) if stated else clark_doc.text,
            )
        )
    return docs


def stub_rules(clark: Clark) -> dict[str, Any]:
    """The stub LM's decisions (tests/fixtures/decisions.py JSON form) for CLARK documents."""
    by_doc = _facts_by_document(clark)
    docs = {i: doc for i, doc in clark.documents.items() if len(doc.text) >= _MIN_CHARS}
    extract = {
        doc.text[:_KEY_CHARS]: by_doc[doc.id]
        for doc in _ordered(clark)
        if doc.id in by_doc and doc.id in docs
    }
    replace: dict[str, dict[str, str | None]] = {}
    for change in clark.changes():  # the successor's document reports the change
        if (doc := docs.get(change.new.document_id)) is not None:
            key = doc.text[:_KEY_CHARS]
            replace.setdefault(key, {})[verbalise(change.stale)] = verbalise(change.new)
    return {
        "false": {},
        "reinforce": [],
        "extract": extract,
        "delay": {},
        "answers": {},
        "replace": replace,
    }


def clark_facts(clark: Clark, namespace: str) -> list[Fact]:
    """Every verbalised triple as a fact, true from the stream time of the document stating it."""
    docs, facts = clark.documents, []
    for triple in clark.triples:
        if triple.document_id not in docs:
            continue
        seen = docs[triple.document_id].stream_time
        facts.append(_fact(namespace, f"t{triple.index}", verbalise(triple), seen))
    return facts


def _fact(namespace: str, fact_id: str, text: str, ts: datetime) -> Fact:
    entry = HistoryEntry(ts=ts, truth=True, document_id=f"d-{fact_id}", edit_id=f"e-{fact_id}")
    return Fact(
        fact_id=fact_id,
        namespace=namespace,
        text=text,
        truth=True,
        history=[entry],
        first_seen=ts,
        last_changed=ts,
    )


def questions(data: Path = DEFAULT_DATA) -> list[str]:
    """The CLARK-News question texts (the ask benchmark's queries)."""
    import orjson

    lines = (data / "questions.jsonl").read_bytes().splitlines()
    return [str(orjson.loads(line)["question"]) for line in lines if line.strip()]


def pool_sentences(clark: Clark, size: int) -> list[str]:
    """``size`` unique real sentences: document sentences, verbalised and recombined triples."""
    found: dict[str, None] = {}
    for doc in _ordered(clark):
        for sentence in _SENTENCE.split(doc.text):
            if 20 <= len(sentence) <= 300:
                found[sentence] = None
    triples = clark.triples
    for triple in triples:
        found[verbalise(triple)] = None
    # Recombined triples: subject of one, relation and object of another.
    for step in range(1, len(triples)):
        for a, b in zip(triples, triples[step:], strict=False):
            if len(found) >= size:
                return list(found)[:size]
            found[f"{a.subject} {b.relation} {b.object}."] = None
    return list(found)[:size]


@dataclass(frozen=True)
class FactPool:
    """Real sentence embeddings and the synthetic facts derived from pairs of them."""

    sentences: list[str]
    vectors: npt.NDArray[np.float32]  # one unit vector per sentence

    def capacity(self) -> int:
        n = len(self.sentences)
        return n * (n - 1)

    def pair(self, j: int) -> tuple[int, int]:
        """Fact j's two sentences: distinct ordered pairs for j < capacity."""
        n = len(self.sentences)
        a, offset = j % n, j // n
        return a, (a + 1 + offset) % n

    def facts(self, namespace: str, start: int, stop: int) -> Iterator[tuple[Fact, list[float]]]:
        """Facts ``start`` to ``stop`` with their derived vectors."""
        if stop > self.capacity():
            raise ValueError(f"the pool makes {self.capacity()} facts, not {stop}")
        t0 = datetime(2020, 1, 1, tzinfo=UTC)
        for j in range(start, stop):
            a, b = self.pair(j)
            vec = self.vectors[a] + self.vectors[b]
            vec = vec / float(np.linalg.norm(vec))
            text = f"{self.sentences[a]} {self.sentences[b]}"
            yield _fact(namespace, f"f{j}", text, t0 + timedelta(seconds=j)), vec.tolist()
