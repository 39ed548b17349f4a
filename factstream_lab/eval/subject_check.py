"""`eval subject-check`: does the subject check pass real supersessions and refuse wrong ones?

No LM and no services: the check (``factstream.edit.about``) is a function of a fact and a
document. Each stale triple stands for the fact the editor would close or rewrite: its
text verbalised, its subject and object structured, as extraction gives them.

- **Supersessions**: every change of a (subject, relation)'s object (``Clark.changes``):
  the stale triple and the document that states the new object. The share that passes
  the check; ``scored``: only those whose stale fact is in the knowledge base when the
  document arrives (``retrieval.scored_changes``), the ones an editor can meet.
- **Wrong invalidations**: every pair of a document and a fact stated before it (by a
  triple of an earlier document) that the document does not supersede; an invalidation of
  it would be wrong. The share the check refuses. The set is strict: a fact the document
  names and leaves alone is counted, and no naming test can refuse it.
- **The demo**: the same two figures over the demo's documents alone
  (``deploy/demo/clark-news-40.jsonl``, a slice of CLARK-News).

Each figure is given for the tests tried, from names alone to the editor's rule, so the
step each part of the rule adds is visible.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from factstream.edit.about import DocumentNames
from factstream.text.names import mentions
from factstream.topics.records import Fact, HistoryEntry
from factstream_lab.eval.datasets import Change, Clark, ClarkDocument, Triple, verbalise
from factstream_lab.eval.retrieval import scored_changes

__all__ = [
    "VARIANTS",
    "SubjectCheckReport",
    "VariantReport",
    "demo_ids",
    "evaluate_subject_check",
]

# A test: whether ``document`` may make the stale triple's fact false.
Test = Callable[[Triple, Fact, ClarkDocument, DocumentNames], bool]


def _subject_as_written(triple: Triple, _: Fact, doc: ClarkDocument, __: DocumentNames) -> bool:
    return mentions(doc.text, triple.subject, short=False)


def _subject_aliases_title(
    triple: Triple, _: Fact, __: ClarkDocument, names: DocumentNames
) -> bool:
    return names.names(triple.subject, subject=True)


def _entities(_: Triple, fact: Fact, __: ClarkDocument, names: DocumentNames) -> bool:
    return names.about(fact, offices=False) is None


def _entities_offices(_: Triple, fact: Fact, __: ClarkDocument, names: DocumentNames) -> bool:
    return names.about(fact) is None


# name -> (what it tests, the test); the last is the editor's rule.
VARIANTS: dict[str, tuple[str, Test]] = {
    "subject-as-written": (
        "the subject's name (or its head) in the text, as the triple writes it",
        _subject_as_written,
    ),
    "subject-aliases-title": (
        "the subject in any alias form (surname, acronym, regnal name, without a suffix), "
        "compared folded, in the text, the title or the source URL's slug",
        _subject_aliases_title,
    ),
    "entities": (
        "as above, for any entity the fact is indexed under (its subject or its object), "
        "with a role title's proper part and names without the words of their kind",
        _entities,
    ),
    "entities-offices": (
        "the editor's rule (factstream.edit.about): as above, or, for a fact of an office "
        "(head of state, chairperson, ...), the office's role noun unqualified by another "
        "name ('the King is head of state', 'the monarch's reign')",
        _entities_offices,
    ),
}


@dataclass
class Share:
    """How many of ``total`` the test ``counted`` (passed, or refused)."""

    counted: int = 0
    total: int = 0

    @property
    def share(self) -> float | None:
        return None if self.total == 0 else round(self.counted / self.total, 4)

    def to_json(self) -> dict[str, Any]:
        return {"counted": self.counted, "total": self.total, "share": self.share}


@dataclass
class VariantReport:
    """One test's figures."""

    name: str
    tests: str
    supersessions_passed: Share = field(default_factory=Share)
    scored_passed: Share = field(default_factory=Share)
    wrong_refused: Share = field(default_factory=Share)
    demo_supersessions_passed: Share = field(default_factory=Share)
    demo_wrong_refused: Share = field(default_factory=Share)
    # The supersessions it does not pass, to read (not to tune the test to).
    misses: list[dict[str, str]] = field(default_factory=list)
    # The demo's wrong pairs it passes: documents that name the fact and leave it alone.
    demo_passed_wrong: list[dict[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        found = asdict(self)
        for key, value in vars(self).items():
            if isinstance(value, Share):
                found[key] = value.to_json()
        return found


@dataclass
class SubjectCheckReport:
    data: str
    documents: int
    triples: int
    demo: str | None
    variants: list[VariantReport]

    def to_json(self) -> dict[str, Any]:
        return {
            "data": self.data,
            "documents": self.documents,
            "triples": self.triples,
            "demo": self.demo,
            "variants": [v.to_json() for v in self.variants],
        }


def _fact(triple: Triple, doc: ClarkDocument) -> Fact:
    """The triple as the fact the editor would hold: verbalised, with its structure."""
    entry = HistoryEntry(
        ts=doc.stream_time, truth=True, document_id=doc.id, edit_id=f"e-{triple.index}"
    )
    return Fact(
        fact_id=f"t-{triple.index}",
        namespace="eval-subject-check",
        text=verbalise(triple),
        truth=True,
        history=[entry],
        first_seen=doc.stream_time,
        last_changed=doc.stream_time,
        subject=triple.subject,
        relation=triple.relation,
        object=triple.object,
    )


def demo_ids(path: Path) -> set[str]:
    """The ids of the documents of a demo file (JSON Lines)."""
    lines = path.read_text().splitlines()
    return {str(json.loads(line)["id"]) for line in lines if line.strip()}


def _miss(change: Change) -> dict[str, str]:
    return {
        "subject": change.stale.subject,
        "relation": change.stale.relation,
        "old": change.stale.object,
        "new": change.new.object,
        "document_id": change.new.document_id,
    }


def _wrong_pairs(clark: Clark, only: set[str] | None) -> Iterable[tuple[Triple, ClarkDocument]]:
    """Every pair of a document and a fact stated before it that it does not supersede
    (``only``: both from these documents)."""
    superseding = {(c.stale.index, c.new.document_id) for c in clark.changes()}
    docs = sorted(clark.documents.values(), key=lambda d: d.position)
    for doc in docs:
        if only is not None and doc.id not in only:
            continue
        for triple in clark.triples:
            stated = clark.documents.get(triple.document_id)
            if stated is None or stated.position >= doc.position:
                continue
            if only is not None and stated.id not in only:
                continue
            if (triple.index, doc.id) not in superseding:
                yield triple, doc


def evaluate_subject_check(
    clark: Clark, data: str, demo: set[str] | None = None, demo_name: str | None = None
) -> SubjectCheckReport:
    """Every variant's figures on ``clark`` (and on the ``demo``'s documents, if given)."""
    names = {
        doc.id: DocumentNames(doc.text, doc.title, doc.source) for doc in clark.documents.values()
    }
    facts = {
        t.index: _fact(t, clark.documents[t.document_id])
        for t in clark.triples
        if t.document_id in clark.documents
    }
    changes: Sequence[Change] = clark.changes()
    scored = {(c.stale.index, c.new.document_id) for c in scored_changes(clark)}
    wrong = list(_wrong_pairs(clark, None))
    demo_wrong = list(_wrong_pairs(clark, demo)) if demo is not None else []
    reports = []
    for name, (tests, test) in VARIANTS.items():
        report = VariantReport(name, tests)

        def passes(triple: Triple, doc: ClarkDocument, test: Test = test) -> bool:
            fact = facts.get(triple.index) or _fact(triple, doc)
            return test(triple, fact, doc, names[doc.id])

        for change in changes:
            doc = clark.documents[change.new.document_id]
            ok = passes(change.stale, doc)
            shares = [report.supersessions_passed]
            if (change.stale.index, doc.id) in scored:
                shares.append(report.scored_passed)
            if demo is not None and doc.id in demo and change.stale.document_id in demo:
                shares.append(report.demo_supersessions_passed)
            for share in shares:
                share.total += 1
                share.counted += ok
            if not ok:
                report.misses.append(_miss(change))
        for triple, doc in wrong:
            report.wrong_refused.total += 1
            report.wrong_refused.counted += not passes(triple, doc)
        for triple, doc in demo_wrong:
            refused = not passes(triple, doc)
            report.demo_wrong_refused.total += 1
            report.demo_wrong_refused.counted += refused
            if not refused:
                report.demo_passed_wrong.append(
                    {"fact": verbalise(triple), "document_id": doc.id, "text": doc.text[:200]}
                )
        reports.append(report)
    return SubjectCheckReport(data, len(clark.documents), len(clark.triples), demo_name, reports)
