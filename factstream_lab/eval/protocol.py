"""The ERASE paper's question protocol on CLARK-News (section 5.1), as pure functions.

Documents stream in timestamp order. Questions are asked at the moments when 20, 40, 60, 80
and 100% of all answer changes have been revealed: every question whose answer changed
since it was last asked (never asked: since the start), plus an equal-sized seeded sample of
questions whose answer did not change. The correct answer at T is the one whose
[known_from, known_until) contains T; scoring is exact match over the question's choices.
"""

from __future__ import annotations

import json
import math
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

__all__ = [
    "CHECKPOINTS",
    "Checkpoint",
    "ClarkQuestion",
    "Score",
    "TimedAnswer",
    "load_questions",
    "schedule",
    "score",
    "truncate",
]

CHECKPOINTS = (0.2, 0.4, 0.6, 0.8, 1.0)


@dataclass(frozen=True)
class TimedAnswer:
    answer: str
    known_from: datetime | None  # None: from the start of the stream
    known_until: datetime | None  # None: still the answer

    def holds_at(self, when: datetime) -> bool:
        started = self.known_from is None or self.known_from <= when
        return started and (self.known_until is None or when < self.known_until)


@dataclass(frozen=True)
class ClarkQuestion:
    index: int
    question: str
    choices: tuple[str, ...]
    answers: tuple[TimedAnswer, ...]  # in known_from order

    def answer_at(self, when: datetime) -> str | None:
        """The correct answer at ``when`` (None before the first is known)."""
        return next((a.answer for a in self.answers if a.holds_at(when)), None)

    @property
    def change_times(self) -> list[datetime]:
        """When the answer changed (the start of every answer after the first)."""
        return [a.known_from for a in self.answers[1:] if a.known_from is not None]


@dataclass(frozen=True)
class Checkpoint:
    """One asking moment: the questions asked, and how many changes each had by then."""

    share: float
    time: datetime
    changed: list[int]
    unchanged: list[int]
    updates: dict[int, int]  # question index -> answer changes revealed by ``time``

    @property
    def asked(self) -> list[int]:
        return self.changed + self.unchanged


@dataclass
class Score:
    """Exact-match accuracy per checkpoint and per number of updates."""

    per_checkpoint: dict[str, float] = field(default_factory=dict)
    per_updates: dict[str, float] = field(default_factory=dict)
    asked: int = 0
    correct: int = 0


def _time(value: object) -> datetime | None:
    return datetime.fromisoformat(str(value)) if value else None


def load_questions(path: Path) -> list[ClarkQuestion]:
    """Read questions.jsonl."""
    questions = []
    lines = [text for text in path.read_text().splitlines() if text.strip()]
    for i, line in enumerate(lines):
        raw = json.loads(line)
        answers = sorted(
            (
                TimedAnswer(a["answer"], _time(a["known_from"]), _time(a["known_until"]))
                for a in raw["answers"]
            ),
            key=lambda a: (a.known_from is not None, a.known_from or datetime.min),
        )
        questions.append(ClarkQuestion(i, raw["question"], tuple(raw["choices"]), tuple(answers)))
    return questions


def truncate(questions: Sequence[ClarkQuestion], until: datetime) -> list[ClarkQuestion]:
    """The questions as a stream that stops at ``until`` knows them (``--limit`` runs).

    Answers known only later are dropped and the last one known stays open; questions with
    no answer known by then are left out. Indexes are renumbered.
    """
    kept: list[ClarkQuestion] = []
    for q in questions:
        known = [a for a in q.answers if a.known_from is None or a.known_from <= until]
        if not known:
            continue
        last = known[-1]
        if last.known_until is not None and last.known_until > until:
            known[-1] = replace(last, known_until=None)
        kept.append(replace(q, index=len(kept), answers=tuple(known)))
    return kept


def schedule(
    questions: Sequence[ClarkQuestion], seed: int = 0, shares: Sequence[float] = CHECKPOINTS
) -> list[Checkpoint]:
    """The asking moments and who is asked at each (seeded, so runs are comparable)."""
    changes = sorted(t for q in questions for t in q.change_times)
    if not changes:
        return []
    rng = random.Random(seed)  # noqa: S311 - a reproducible sample, not a secret
    last_asked: dict[int, datetime] = {}
    checkpoints = []
    for share in shares:
        at = changes[max(0, math.ceil(share * len(changes)) - 1)]
        changed, unchanged = [], []
        for q in questions:
            if q.answer_at(at) is None:
                continue
            since = last_asked.get(q.index)
            if any((since is None or since < t) and t <= at for t in q.change_times):
                changed.append(q.index)
            else:
                unchanged.append(q.index)
        sample = sorted(rng.sample(unchanged, min(len(changed), len(unchanged))))
        updates = {i: sum(t <= at for t in questions[i].change_times) for i in changed + sample}
        checkpoints.append(Checkpoint(share, at, changed, sample, updates))
        for i in changed + sample:
            last_asked[i] = at
    return checkpoints


def score(
    questions: Sequence[ClarkQuestion],
    checkpoints: Sequence[Checkpoint],
    predictions: Mapping[tuple[float, int], str | None],
) -> Score:
    """Exact match of ``predictions[(share, question index)]`` against the answer then."""
    result = Score()
    by_updates: dict[str, list[bool]] = defaultdict(list)
    for cp in checkpoints:
        hits = []
        for i in cp.asked:
            ok = predictions.get((cp.share, i)) == questions[i].answer_at(cp.time)
            hits.append(ok)
            by_updates[str(min(cp.updates[i], 2)) + ("+" if cp.updates[i] >= 2 else "")].append(ok)
        if hits:  # a checkpoint that asks nothing has no accuracy
            result.per_checkpoint[f"{cp.share:.0%}"] = sum(hits) / len(hits)
        result.asked += len(hits)
        result.correct += sum(hits)
    result.per_updates = {k: sum(v) / len(v) for k, v in sorted(by_updates.items())}
    return result
