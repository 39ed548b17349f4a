"""The demo's closing story: one fact whose truth changed, one question asked before and after.

After `factstream demo` has edited its documents in, the story picks the first change of a
fact's truth the checks accepted, that is one applied (a rewrite, else a close, else an
invalidation, in event-time order): the fact before, the document that changed it, and
what holds after; or it says that none was, with the changes the checks refused
(``factstream_lm_subject_checked`` refused). It then asks one
question about that fact as of just before that document and as of it, and shows both
answers with the facts each cited. Last, the share of facts the grounding check kept,
from the worker's counters (``factstream_lm_grounded``, ``factstream_lm_refused``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from factstream.ask.query import AskRequest, AskResult, QueryEngine
from factstream.edit.grounding import REASONS
from factstream.temporal.intervals import at
from factstream.topics.records import Document, EditOp, FactEdit

__all__ = [
    "Asked",
    "Grounding",
    "Story",
    "TruthChange",
    "ask_before_and_after",
    "figures_markdown",
    "find_change",
    "grounding_from_metrics",
    "lm_calls_from_metrics",
    "metric_counts",
    "question_for",
    "refused_changes_from_metrics",
    "story_lines",
]

# The order a change is preferred in: a rewrite shows the most (before and after).
_CHANGES = (EditOp.REWRITE, EditOp.CLOSE, EditOp.INVALIDATE)
_CITED = 3  # facts shown per answer


@dataclass(frozen=True)
class TruthChange:
    """One fact a document changed.

    Attributes:
        op: rewrite (replaced by ``after``), close (the world changed: it held until the
            document) or invalidate (the document shows it was never true).
        before: The fact as it stood before the document.
        after: The fact that holds instead (a rewrite); None when nothing replaced it.
        document: The document that changed it.
        subject: The fact's subject where the editor could tell it.
    """

    op: str
    before: str
    after: str | None
    document: Document
    subject: str | None = None


@dataclass(frozen=True)
class Asked:
    """One answer: as of when, what, and the facts it cited (text, true then, similarity)."""

    as_of: datetime
    answer: str
    facts: list[tuple[str, bool, float]]

    @classmethod
    def of_result(cls, as_of: datetime, result: AskResult) -> Asked:
        cited = [(u.fact.text, u.truth, round(u.score, 3)) for u in result.facts[:_CITED]]
        return cls(as_of, result.answer, cited)


@dataclass(frozen=True)
class Grounding:
    """What the grounding check did to the LM's added and rewritten facts."""

    kept: int
    refused: int
    by_reason: dict[str, int] = field(default_factory=dict)

    @property
    def share_kept(self) -> float | None:
        seen = self.kept + self.refused
        return self.kept / seen if seen else None


@dataclass(frozen=True)
class Story:
    """The closing story; ``change`` None when no document changed a fact's truth."""

    change: TruthChange | None
    question: str | None
    before: Asked | None
    after: Asked | None
    grounding: Grounding | None
    # Changes the LM decided that a check refused (the subject check: a document about
    # something else); they were never applied.
    refused_changes: int = 0

    def to_json(self) -> dict[str, Any]:
        change = None
        if self.change is not None:
            doc = self.change.document
            change = {
                **asdict(self.change),
                "document": {"id": doc.id, "timestamp": doc.timestamp, "text": doc.text},
            }
        grounding = self.grounding
        return {
            "change": change,
            "question": self.question,
            "before": None if self.before is None else asdict(self.before),
            "after": None if self.after is None else asdict(self.after),
            "grounding": None
            if grounding is None
            else {**asdict(grounding), "share_kept": grounding.share_kept},
            "refused_changes": self.refused_changes,
        }


def find_change(edits: Iterable[FactEdit], documents: Mapping[str, Document]) -> TruthChange | None:
    """The first fact a document of ``documents`` changed, a rewrite preferred."""
    changing = [e for e in edits if e.op in _CHANGES and e.document_id in documents]
    if not changing:
        return None
    edit = min(changing, key=lambda e: (_CHANGES.index(e.op), e.event_time, e.batch.position))
    document = documents[edit.document_id]
    if edit.op is EditOp.REWRITE:
        before = edit.previous_text or ""
        return TruthChange(edit.op.value, before, edit.text, document, edit.subject)
    return TruthChange(edit.op.value, edit.text, None, document, edit.subject)


def question_for(change: TruthChange) -> str:
    """A question the changed fact answers: about its subject, else about the fact itself."""
    if change.subject:
        return f"What is true of {change.subject}?"
    return f"Is this true: {change.before}"


async def ask_before_and_after(
    engine: QueryEngine, namespace: str, question: str, when: datetime
) -> tuple[Asked, Asked]:
    """``question`` as of one second before ``when`` and as of ``when``, each about its time."""
    asked = []
    for as_of in (when - timedelta(seconds=1), when):
        request = AskRequest(question, namespace, as_of=as_of, top_k=_CITED, valid=at(as_of))
        asked.append(Asked.of_result(as_of, await engine.ask(request)))
    return asked[0], asked[1]


def grounding_from_metrics(text: str) -> Grounding | None:
    """The grounding counts in a worker's /metrics text; None when it counted nothing."""
    outcomes: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "factstream_lm_grounded_total":
                outcomes[sample.labels["outcome"]] += int(sample.value)
            elif sample.name == "factstream_lm_refused_total" and (
                sample.labels["reason"] in REASONS
            ):
                reasons[sample.labels["reason"]] += int(sample.value)
    if not outcomes:
        return None
    return Grounding(outcomes["kept"], outcomes["refused"], dict(sorted(reasons.items())))


def refused_changes_from_metrics(text: str) -> int:
    """Changes of a fact's truth the subject check refused (``factstream_lm_subject_checked``
    refused), in a worker's /metrics text."""
    return metric_counts(text, "factstream_lm_subject_checked_total", "outcome").get("refused", 0)


def metric_counts(text: str, name: str, label: str) -> dict[str, int]:
    """The samples of counter ``name`` in a /metrics ``text``, summed by ``label``."""
    counts: Counter[str] = Counter()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                counts[sample.labels[label]] += int(sample.value)
    return dict(sorted(counts.items()))


def lm_calls_from_metrics(text: str) -> dict[str, int]:
    """The worker's LM calls by outcome (ok, cached, error, invalid_output)."""
    return metric_counts(text, "factstream_lm_requests_total", "outcome")


def _asked_lines(label: str, asked: Asked) -> list[str]:
    lines = [f"  {label} (as of {asked.as_of:%Y-%m-%d %H:%M:%S}): {asked.answer}"]
    lines += [
        f"      cited: {text} [{'true' if truth else 'false'} then, similarity {score:.2f}]"
        for text, truth, score in asked.facts
    ] or ["      cited: no fact held then"]
    return lines


def story_lines(story: Story) -> list[str]:
    """The story as plain lines for the terminal."""
    lines: list[str] = []
    change = story.change
    refused = story.refused_changes
    if change is None:
        lines.append(
            "No change to a fact's truth was accepted in this run: no rewrite, close or "
            "invalidation passed the checks and was applied"
            + (f" (the checks refused {refused})." if refused else ".")
        )
    else:
        doc = change.document
        text = doc.text if len(doc.text) <= 160 else doc.text[:157] + "..."
        after = {
            "rewrite": f"after:    {change.after}",
            "close": "after:    no longer holds (closed: the world changed)",
            "invalidate": "after:    never was true (invalidated: a correction)",
        }[change.op]
        lines += [
            "A change the checks accepted"
            + (f" ({refused} other changes refused):" if refused else ":"),
            f"  before:   {change.before}",
            f"  document: {doc.id} ({doc.timestamp.date().isoformat()}): {text}",
            f"  {after}",
        ]
        if story.question and story.before and story.after:
            lines.append(f"The question {story.question!r}, asked before and after it:")
            lines += _asked_lines("before", story.before) + _asked_lines("after", story.after)
    grounding = story.grounding
    if grounding is None or grounding.share_kept is None:
        lines.append("Grounding check: no counts from the worker.")
    else:
        reasons = ", ".join(f"{r} {n}" for r, n in grounding.by_reason.items()) or "none"
        seen = grounding.kept + grounding.refused
        lines.append(
            f"Grounding check: kept {grounding.kept} of {seen} facts the LM added or rewrote "
            f"({grounding.share_kept:.1%}); refused by reason: {reasons}."
        )
    return lines


def _lm_rows(lm: Mapping[str, Any]) -> list[tuple[str, str]]:
    calls = sum(lm["calls_by_task"].values())
    invalid = lm["invalid_outputs_by_task"]
    kinds = "; ".join(
        f"{task} " + ", ".join(f"{kind} {n}" for kind, n in by_kind.items())
        for task, by_kind in invalid.items()
    )
    share = lm["invalid_share"]
    said = f"{sum(sum(k.values()) for k in invalid.values())} of {calls} calls"
    said += f" ({share:.1%})" if share is not None else ""
    said += f": {kinds}" if kinds else ""
    repaired = sum(lm["repaired_by_task"].values())
    generated = sum(lm["completion_tokens_by_task"].values())
    per_doc = lm["completion_tokens_per_document"]
    return [
        (
            "worker's LM calls",
            f"{calls} ({', '.join(f'{t} {n}' for t, n in lm['calls_by_task'].items())})",
        ),
        ("invalid LM answers", said),
        ("answers repaired", f"{repaired} (raw control characters escaped)"),
        ("tokens generated", f"{generated} ({per_doc} a document)"),
    ]


def figures_markdown(figures: Mapping[str, Any]) -> str:
    """The results file of a demo run (``DemoResult.to_json``) as the table docs/demo.md quotes."""
    timings = figures["timings"]
    steps = ", ".join(f"{step} {seconds:.0f} s" for step, seconds in timings.items())
    ops = ", ".join(f"{op} {n}" for op, n in figures["edits_by_op"].items()) or "none"
    rows = [
        ("model", f"`{figures['model']}`"),
        ("documents", f"{figures['documents']} (`{figures['data']}`)"),
        ("time", f"{figures['seconds']:.0f} s ({steps})"),
        ("facts", f"{figures['facts']} ({figures['facts_true']} true); edits by op: {ops}"),
    ]
    outcomes = figures.get("document_outcomes") or {}
    if outcomes:
        said = ", ".join(f"{outcome} {n}" for outcome, n in outcomes.items())
        rows.append(("documents by outcome", said))
    causes = figures.get("dead_letter_causes") or {}  # runs before issue 36 lack it
    if causes:
        said = ", ".join(f"{cause} {n}" for cause, n in causes.items())
        rows.append(("dead letters by cause", said))
    calls = figures.get("worker_lm_calls") or {}
    lm = figures.get("worker_lm")  # runs before issue 36 lack it
    if calls and lm is None:
        said = ", ".join(f"{outcome} {n}" for outcome, n in calls.items())
        rows.append(("worker's LM calls", f"{sum(calls.values())} ({said})"))
    if lm is not None:
        rows += _lm_rows(lm)
    grounding = figures["story"]["grounding"]
    if grounding is not None and grounding["share_kept"] is not None:
        seen = grounding["kept"] + grounding["refused"]
        reasons = ", ".join(f"{r} {n}" for r, n in grounding["by_reason"].items()) or "none"
        rows.append(
            (
                "grounding check",
                f"kept {grounding['kept']} of {seen} ({grounding['share_kept']:.1%}); "
                f"refused: {reasons}",
            )
        )
    audit = figures["audit"]
    rows.append(
        (
            "audit of kept facts",
            f"{audit['flagged_documents']} of {audit['documents_with_kept_facts']} documents "
            f"with kept facts flagged ({audit['kept_facts']} facts)",
        )
    )
    change = figures["story"]["change"]
    if change is not None:
        rows.append(("truth changed", f"{change['op']} by `{change['document']['id']}`"))
    mirror = figures.get("mirror")  # results files of runs before the demo had a mirror lack it
    if mirror is not None:
        equal = "equal to" if mirror["equal"] else "NOT equal to"
        rows.append(
            (
                "PostgreSQL mirror",
                f"{mirror['facts']} facts ({mirror['facts_true']} true), {equal} the knowledge "
                f"base by fact id, truth and record; {mirror['edits_mirrored']} of "
                f"{mirror['edits_expected']} edits mirrored",
            )
        )
    table = ["| what | figure |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)]
    return "\n".join(table) + "\n"
