"""The demo's summary: what became of each document, why the dead-lettered ones failed, and
what the LM calls cost and how many answers it had to be asked for again.

Read from the demo worker's /metrics text (``factstream_documents``, ``factstream_lm_*``) and
the namespace's dead letters (``factstream.ops.dead_letters``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from factstream.ops.dead_letters import Letter

__all__ = ["LMFigures", "dead_letter_json", "lm_figures_from_metrics", "lm_line", "outcome_line"]

# Outcomes in the order a reader wants them, and how the line names them.
_OUTCOMES = {
    "applied": "applied",
    "empty": "empty (nothing to change)",
    "review": "held for review",
    "duplicate": "duplicate",
    "recovered": "recovered",
    "dead_letter": "dead-lettered",
}


@dataclass(frozen=True)
class LMFigures:
    """The worker's LM calls by task: made, answers invalid by kind, repaired, tokens.

    Attributes:
        calls: Calls by task (ok, cached or failed at the server; an invalid answer is
            one of them).
        invalid: Invalid answers by task, then kind (json, schema, check, cut_off).
        repaired: Answers repaired instead of asked again, by task.
        completion_tokens: Tokens the server generated, by task.
        prompt_tokens: Prompt tokens the server read, by task.
    """

    calls: dict[str, int] = field(default_factory=dict)
    invalid: dict[str, dict[str, int]] = field(default_factory=dict)
    repaired: dict[str, int] = field(default_factory=dict)
    completion_tokens: dict[str, int] = field(default_factory=dict)
    prompt_tokens: dict[str, int] = field(default_factory=dict)

    @property
    def answers(self) -> int:
        """The calls made."""
        return sum(self.calls.values())

    @property
    def invalid_total(self) -> int:
        return sum(sum(kinds.values()) for kinds in self.invalid.values())

    def to_json(self, documents: int) -> dict[str, Any]:
        """As the results file keeps them; ``documents``: how many were published."""
        generated = sum(self.completion_tokens.values())
        return {
            "calls_by_task": self.calls,
            "invalid_outputs_by_task": self.invalid,
            "invalid_share": round(self.invalid_total / self.answers, 4) if self.answers else None,
            "repaired_by_task": self.repaired,
            "completion_tokens_by_task": self.completion_tokens,
            "prompt_tokens_by_task": self.prompt_tokens,
            "completion_tokens_per_document": round(generated / documents, 1)
            if documents
            else None,
        }


def lm_figures_from_metrics(text: str) -> LMFigures:
    """The LM figures in a worker's /metrics ``text`` (empty where it counted nothing)."""
    calls: Counter[str] = Counter()
    invalid: defaultdict[str, Counter[str]] = defaultdict(Counter)
    repaired: Counter[str] = Counter()
    tokens: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels, value = sample.labels, int(sample.value)
            match sample.name:
                case "factstream_lm_requests_total" if labels["outcome"] != "invalid_output":
                    # An invalid answer was counted ok (or cached) by the client as well.
                    calls[labels["task"]] += value
                case "factstream_lm_invalid_outputs_total":
                    invalid[labels["task"]][labels["kind"]] += value
                case "factstream_lm_repaired_total":
                    repaired[labels["task"]] += value
                case "factstream_lm_tokens_total":
                    tokens[labels["kind"]][labels["task"]] += value
    return LMFigures(
        dict(sorted(calls.items())),
        {task: dict(sorted(kinds.items())) for task, kinds in sorted(invalid.items())},
        dict(sorted(repaired.items())),
        dict(sorted(tokens["completion"].items())),
        dict(sorted(tokens["prompt"].items())),
    )


def outcome_line(outcomes: Mapping[str, int], letters: Sequence[Letter]) -> str:
    """``Documents: 29 applied, 4 empty (nothing to change), 7 dead-lettered (LM output
    invalid (extract_facts.v2) 7)``; outcomes in a fixed order, dead letters with their
    causes."""
    parts = []
    for outcome in [*_OUTCOMES, *sorted(set(outcomes) - set(_OUTCOMES))]:
        n = outcomes.get(outcome, 0)
        if not n:
            continue
        part = f"{n} {_OUTCOMES.get(outcome, outcome)}"
        if outcome == "dead_letter" and letters:
            causes = Counter(letter.cause for letter in letters)
            part += " (" + ", ".join(f"{c} {k}" for c, k in causes.most_common()) + ")"
        parts.append(part)
    return "Documents: " + (", ".join(parts) or "none processed") + "."


def lm_line(figures: LMFigures, documents: int) -> str:
    """``LM: 134 answers, 2 invalid (0.0%: extract_facts cut_off 2), 3 repaired; 6,120
    tokens generated, 153 a document.``"""
    if not figures.answers:
        return "LM: no calls counted."
    invalid = figures.invalid_total
    said = "; ".join(
        f"{task} " + ", ".join(f"{kind} {n}" for kind, n in kinds.items())
        for task, kinds in figures.invalid.items()
    )
    share = f"{invalid / figures.answers:.1%}" + (f": {said}" if said else "")
    generated = sum(figures.completion_tokens.values())
    per_doc = f", {generated / documents:.0f} a document" if documents else ""
    return (
        f"LM: {figures.answers} answers, {invalid} invalid ({share}), "
        f"{sum(figures.repaired.values())} repaired; {generated:,} tokens generated{per_doc}."
    )


def dead_letter_json(letters: Sequence[Letter]) -> list[dict[str, Any]]:
    """The dead letters as the results file keeps them."""
    return [
        {
            "ref": letter.ref,
            "document_id": letter.document_id,
            "cause": letter.cause,
            "reason": letter.record.reason,
        }
        for letter in letters
    ]
