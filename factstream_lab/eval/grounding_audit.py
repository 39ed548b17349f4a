"""Audit of the facts the grounding check kept: a stricter reading than the check's own.

The demo (`factstream demo`) runs it on every fact the editor added or rewrote from its
documents. A kept fact is flagged for:

- ``prompt_text``: a run of :data:`AUDIT_PROMPT_WORDS` words (numbers one word) shared
  with the default prompts' own text, as the editor renders them, that its sources lack
  (the check refuses runs of six);
- ``placeholder``: one of the check's placeholders (``grounding.PLACEHOLDERS``) its
  sources lack;
- ``entity``: a capitalised word anywhere in it, sentence openers included (the check
  skips a lone one), that no source has, case aside; an acronym counts only as written
  (the check also takes the initials of the document's words);
- ``number``: a number, in digits, that no source writes in digits (the check also reads
  number words and scales).

The sources are the document (title, text and date) and, for a rewrite, the fact it
replaced. A flag is a fact for a person to read, not a verdict: the audit is strict on
purpose, and the rewrite prompt also shows the facts still true, which it cannot see.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Literal

from factstream.config import EditorSettings
from factstream.edit.grounding import PLACEHOLDERS, prompt_texts
from factstream.prompts.registry import PROMPTS
from factstream.topics.records import Document, EditOp, FactEdit

__all__ = ["AUDIT_PROMPT_WORDS", "AuditReport", "Flag", "audit_edits", "audit_fact"]

AUDIT_PROMPT_WORDS = 5
FlagKind = Literal["prompt_text", "placeholder", "entity", "number"]

# Words that open a sentence without naming anything (the audit checks every other
# capitalised word, wherever it stands).
_FUNCTION_WORDS = frozenset(
    """a an the this that these those there it its he she his her they their we our i you
    in on at of for from by with as after before during since until to into over under
    and or but if when while who which what where how former formerly currently now
    today also both all each every some no not one another according""".split()  # noqa: SIM905
)
_PLACEHOLDER_RES = tuple(re.compile(p, re.IGNORECASE) for p in PLACEHOLDERS)


@dataclass(frozen=True)
class Flag:
    """One reason a kept fact is flagged."""

    kind: FlagKind
    detail: str


@dataclass(frozen=True)
class AuditedFact:
    document_id: str
    op: str
    text: str
    flags: list[Flag]


@dataclass
class AuditReport:
    """The audit of one namespace's kept facts, by document."""

    documents: int
    facts: list[AuditedFact] = field(default_factory=list)

    @property
    def documents_with_facts(self) -> int:
        return len({f.document_id for f in self.facts})

    @property
    def flagged(self) -> list[AuditedFact]:
        return [f for f in self.facts if f.flags]

    @property
    def flagged_documents(self) -> int:
        return len({f.document_id for f in self.flagged})

    def to_json(self) -> dict[str, Any]:
        return {
            "documents": self.documents,
            "documents_with_kept_facts": self.documents_with_facts,
            "kept_facts": len(self.facts),
            "flagged_documents": self.flagged_documents,
            "flagged_facts": [asdict(f) for f in self.flagged],
        }


def _fold(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text)
    return "".join(c for c in plain if not unicodedata.combining(c)).casefold()


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", _fold(text))


def _runs(text: str, n: int) -> set[tuple[str, ...]]:
    words = ["#" if w.isdigit() else w for w in _words(text)]
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


def _default_prompt_runs() -> frozenset[tuple[str, ...]]:
    """Runs of the prompts the editor uses by default, without the probe data."""
    editor = EditorSettings()
    ids = (editor.extract_prompt, editor.rewrite_prompt, editor.classify_prompt)
    found: set[tuple[str, ...]] = set()
    for text in prompt_texts({i: PROMPTS[i] for i in ids}):
        found |= {r for r in _runs(text, AUDIT_PROMPT_WORDS) if not any("zqx" in w for w in r)}
    return frozenset(found)


def _numbers(text: str) -> set[str]:
    return {str(int(n.replace(",", ""))) for n in re.findall(r"\d+(?:,\d{3})*", text)}


def audit_fact(
    fact: str,
    sources: Sequence[str],
    prompt_runs: frozenset[tuple[str, ...]],
) -> list[Flag]:
    """Why ``fact`` is flagged against ``sources`` (document, date, replaced fact)."""
    joined = "\n".join(sources)
    copied = (_runs(fact, AUDIT_PROMPT_WORDS) & prompt_runs) - _runs(joined, AUDIT_PROMPT_WORDS)
    flags = [Flag("prompt_text", " ".join(run)) for run in sorted(copied)[:1]]
    folded = _fold(joined)
    for pattern in _PLACEHOLDER_RES:
        found = pattern.search(fact)
        if found and _fold(found[0]) not in folded:
            flags.append(Flag("placeholder", found[0]))
    known = set(_words(joined))
    for word in re.findall(r"[^\W_]+", fact):  # letters and digits together: "U23", "T1"
        folded_word = _fold(word)
        if word[0].isupper() and folded_word not in _FUNCTION_WORDS and folded_word not in known:
            flags.append(Flag("entity", word))
    flags += [Flag("number", n) for n in sorted(_numbers(fact) - _numbers(joined))]
    return flags


def _date_words(when: datetime) -> str:
    return f"{when.date().isoformat()} {when:%B} {when.day} {when.year}"


def audit_edits(edits: Iterable[FactEdit], documents: Mapping[str, Document]) -> AuditReport:
    """Audit every add and rewrite in ``edits`` against the document it came from."""
    runs = _default_prompt_runs()
    report = AuditReport(documents=len(documents))
    for edit in edits:
        if edit.op not in (EditOp.ADD, EditOp.REWRITE) or edit.document_id not in documents:
            continue
        doc = documents[edit.document_id]
        sources = [doc.title or "", doc.text, _date_words(doc.timestamp)]
        if edit.previous_text:
            sources.append(edit.previous_text)
        flags = audit_fact(edit.text, sources, runs)
        report.facts.append(AuditedFact(edit.document_id, edit.op.value, edit.text, flags))
    return report
