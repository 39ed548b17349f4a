"""Evidence recall@k and relative time resolved, per question and per category.

A question's evidence recall@k is the share of its evidence turns that the first ``k``
results cite (a turn passage cites its turn; an extracted fact the turns it came from).
Per category, the mean over the questions with evidence in the conversation (as memory
systems report it). Time resolved is scored for temporal questions (category 2) whose gold
answer names an interval (``timing.gold_interval``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from factstream_lab.eval.locomo.data import CATEGORIES

__all__ = ["KS", "QuestionScore", "by_category", "evidence_recall"]

KS = (5, 10)
TEMPORAL = 2


def evidence_recall(evidence: Collection[str], cited: Sequence[Collection[str]], k: int) -> float:
    """The share of ``evidence`` cited by the first ``k`` results (``cited``: each result's
    turns, best first).

    Raises:
        ValueError: no evidence, or k below 1.
    """
    if not evidence:
        raise ValueError("a question without evidence has no evidence recall")
    if k < 1:
        raise ValueError(f"k is at least 1, not {k}")
    found = set().union(*cited[:k]) if cited[:k] else set()
    return len(set(evidence) & found) / len(set(evidence))


@dataclass
class QuestionScore:
    """One question's scores in one knowledge base.

    ``recall``: per mode, per k. ``time``: for a temporal question with a readable gold
    answer, whether the time was resolved (None: not scored); ``time_word``: whether its
    evidence has a word that says when.
    """

    conversation: str
    category: int
    question: str
    answer: str | None
    evidence: tuple[str, ...]
    recall: dict[str, dict[int, float]] = field(default_factory=dict)
    time: bool | None = None
    time_word: bool = False
    detail: dict[str, Any] = field(default_factory=dict)
    # With answers (--lm): the query agent's answer, its score (answers.score_answer), the
    # judge's label (None: not judged) or why it failed.
    predicted: str | None = None
    answer_score: float | None = None
    judge_correct: bool | None = None
    answer_error: str | None = None

    def row(self) -> dict[str, Any]:
        return {
            "conversation": self.conversation,
            "category": self.category,
            "question": self.question,
            "answer": self.answer,
            "evidence": list(self.evidence),
            "recall": {
                mode: {f"at_{k}": value for k, value in at.items()}
                for mode, at in self.recall.items()
            },
            "time_resolved": self.time,
            "time_word": self.time_word,
            "predicted": self.predicted,
            "answer_score": self.answer_score,
            "judge_correct": self.judge_correct,
            "answer_error": self.answer_error,
            **self.detail,
        }


def by_category(
    scores: Sequence[QuestionScore], modes: Sequence[str], headline: str
) -> dict[str, dict[str, Any]]:
    """Per category ("1" to "5") and "all": counts, recall per mode, the ``headline`` mode's
    recall as ``evidence_recall_at_5``/``_at_10``, and for temporal ``time_resolved``."""
    groups: dict[str, list[QuestionScore]] = {str(c): [] for c in CATEGORIES}
    for score in scores:
        groups[str(score.category)].append(score)
    groups["all"] = list(scores)
    return {name: _summary(name, group, modes, headline) for name, group in groups.items()}


def _summary(
    name: str, group: Sequence[QuestionScore], modes: Sequence[str], headline: str
) -> dict[str, Any]:
    scored = [s for s in group if s.recall]
    per_mode = {mode: _recall(scored, mode) for mode in modes}
    summary: dict[str, Any] = {
        "name": CATEGORIES.get(int(name), name) if name.isdigit() else name,
        "questions": len(group),
        "with_evidence": len(scored),
        **{f"evidence_recall_at_{k}": per_mode[headline][f"at_{k}"] for k in KS},
        "modes": per_mode,
    }
    if name == str(TEMPORAL):
        summary.update(_time_summary(group))
    return summary


def _recall(scored: Sequence[QuestionScore], mode: str) -> Mapping[str, float | None]:
    return {f"at_{k}": fmean(s.recall[mode][k] for s in scored) if scored else None for k in KS}


def _time_summary(group: Sequence[QuestionScore]) -> dict[str, Any]:
    readable = [s for s in group if s.time is not None]
    worded = [s for s in readable if s.time_word]
    return {
        "time_resolved": _share(s.time for s in readable),
        "time_resolved_with_time_word": _share(s.time for s in worded),
        "time": {
            "gold_readable": len(readable),
            "gold_unreadable": len(group) - len(readable),
            "with_time_word": len(worded),
            "resolved": sum(bool(s.time) for s in readable),
        },
    }


def _share(flags: Any) -> float | None:
    values = [bool(f) for f in flags]
    return sum(values) / len(values) if values else None
