"""LoCoMo's answer scores: token F1 per category (the LoCoMo paper's), an abstention rule for
the adversarial category, and the mem0 paper's LM judge.

Token F1 follows the LoCoMo paper's evaluation (snap-research/locomo, task_eval/evaluation.py):
both texts normalized (commas dropped, lower case, punctuation and the words "a", "an",
"the", "and" removed, whitespace collapsed), then the F1 of the two token multisets. Per
category as there:

- 1 multi-hop: the answer and the gold split at commas; for each gold part the best F1 of
  any answer part, averaged;
- 2, 4: plain F1; 3 open-domain: against the gold's first ";"-separated part;
- 5 adversarial: 1 when the answer says the conversation does not tell ("no information
  available", "not mentioned"), else 0; reported apart, never in the 1-4 mean.

One difference: the paper's code stems tokens (Porter) before counting; this one does not
(no stemmer among the dependencies), so "researching" and "research" differ here.

The judge (``judge_answer.v1``) labels answers to categories 1-4 CORRECT or WRONG; the
mem0 paper judges those four only, and so does this.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from statistics import fmean
from typing import Any

from factstream.lm.tasks.runner import TaskRunner
from factstream.prompts.judge_answer import JUDGE_ANSWER_V1, JudgeAnswerContext

__all__ = ["ADVERSARIAL", "abstains", "judge", "normalize", "score_answer", "summarize", "token_f1"]

ADVERSARIAL = 5
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ABSTAINS = ("no information available", "not mentioned")


def normalize(text: str) -> str:
    """Lower case, no commas, punctuation or articles ("a", "an", "the", "and")."""
    lowered = text.replace(",", "").lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", lowered).split())


def token_f1(predicted: str, gold: str) -> float:
    """The F1 of the normalized texts' token multisets (0 when they share none)."""
    said, expected = normalize(predicted).split(), normalize(gold).split()
    same = sum((Counter(said) & Counter(expected)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(said), same / len(expected)
    return 2 * precision * recall / (precision + recall)


def abstains(predicted: str) -> bool:
    """Whether the answer says the conversation does not tell (category 5's right reply)."""
    lowered = predicted.lower()
    return any(phrase in lowered for phrase in _ABSTAINS)


def score_answer(category: int, predicted: str, gold: str | None) -> float:
    """The question's score: token F1 for categories 1-4 (as the paper splits them), the
    abstention rule for 5.

    Raises:
        ValueError: a category 1-4 question without a gold answer.
    """
    if category == ADVERSARIAL:
        return 1.0 if abstains(predicted) else 0.0
    if gold is None:
        raise ValueError(f"a category {category} question needs a gold answer")
    if category == 1:
        parts = [p.strip() for p in predicted.split(",")]
        golds = [g.strip() for g in gold.split(",")]
        return fmean(max(token_f1(p, g) for p in parts) for g in golds)
    if category == 3:
        gold = gold.split(";")[0].strip()
    return token_f1(predicted, gold)


async def judge(runner: TaskRunner, question: str, gold: str, predicted: str) -> bool:
    """The LM judge's label (mem0's protocol): True for CORRECT."""
    context = JudgeAnswerContext(question=question, gold=gold, answer=predicted)
    result = await runner.run(JUDGE_ANSWER_V1, context)
    return result.value.label == "CORRECT"


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per category ("1" to "5"): answered, mean F1 (5: the share that abstained) and the
    judge's accuracy; "1-4": the same over categories 1 to 4 (what papers report)."""
    groups: dict[str, list[dict[str, Any]]] = {str(c): [] for c in range(1, 6)}
    for row in rows:
        groups[str(row["category"])].append(row)
    groups["1-4"] = [r for r in rows if r["category"] != ADVERSARIAL]
    summary = {}
    for name, group in groups.items():
        scored = [r["answer_score"] for r in group if r.get("answer_score") is not None]
        judged = [r["judge_correct"] for r in group if r.get("judge_correct") is not None]
        key = "abstained" if name == str(ADVERSARIAL) else "f1"
        summary[name] = {
            "answered": len(scored),
            key: fmean(scored) if scored else None,
            "judged": len(judged),
            "judge_accuracy": sum(judged) / len(judged) if judged else None,
            "failed": sum(r.get("answer_error") is not None for r in group),
        }
    return summary
