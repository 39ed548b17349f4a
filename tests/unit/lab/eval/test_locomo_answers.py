"""LoCoMo's answer scores: the paper's normalization and token F1 per category, category 5's
abstention rule, and the per-category summary (categories 1-4 apart from 5)."""

from __future__ import annotations

import pytest
from fixtures.decisions import Decisions
from fixtures.editing import scripted

from factstream.lm.tasks.runner import TaskRunner
from factstream.prompts.judge_answer import JudgeAnswerContext, judge_answer_v1
from factstream_lab.eval.locomo.answers import (
    abstains,
    judge,
    normalize,
    score_answer,
    summarize,
    token_f1,
)


def test_normalize_drops_case_commas_punctuation_and_articles() -> None:
    assert normalize("The Sunday before, 25 May 2023!") == "sunday before 25 may 2023"
    assert normalize("a cat and an owl") == "cat owl"


def test_token_f1_counts_shared_tokens() -> None:
    assert token_f1("researching adoption agencies", "Researching adoption agencies.") == 1.0
    # 3 of 7 said tokens are the gold's 3: precision 3/7, recall 1.
    said = "Caroline's summer plan is researching adoption agencies."
    assert token_f1(said, "researching adoption agencies") == pytest.approx(0.6)
    assert token_f1("nothing alike", "7 May 2023") == 0.0
    assert token_f1("", "7 May 2023") == 0.0


def test_categories_score_as_the_paper_splits_them() -> None:
    # 1 multi-hop: per gold part, the best answer part; averaged.
    assert score_answer(1, "psychology, art", "Psychology, counseling certification") == 0.5
    # 3 open-domain: the gold's first ';' part.
    assert score_answer(3, "likely yes", "Likely yes; she loves it") == 1.0
    assert score_answer(4, "mental health", "mental health") == 1.0
    # 5 adversarial: only an answer that says the conversation does not tell.
    assert score_answer(5, "That is not mentioned in the conversation.", None) == 1.0
    assert score_answer(5, "Adoption agencies", None) == 0.0
    assert abstains("No information available.") and not abstains("no idea")
    with pytest.raises(ValueError, match="gold"):
        score_answer(2, "May", None)


def test_summary_keeps_category_5_apart() -> None:
    rows = [
        {"category": 4, "answer_score": 1.0, "judge_correct": True},
        {"category": 4, "answer_score": 0.5, "judge_correct": False},
        {"category": 2, "answer_score": 0.0, "judge_correct": None, "answer_error": "x"},
        {"category": 5, "answer_score": 1.0, "judge_correct": None},
    ]
    summary = summarize(rows)
    assert summary["4"] == {
        "answered": 2,
        "f1": 0.75,
        "judged": 2,
        "judge_accuracy": 0.5,
        "failed": 0,
    }
    assert summary["5"]["abstained"] == 1.0 and "f1" not in summary["5"]
    assert summary["1-4"]["answered"] == 3 and summary["1-4"]["f1"] == pytest.approx(0.5)
    assert summary["1-4"]["failed"] == 1 and summary["1"]["f1"] is None


async def test_the_judge_prompt_carries_question_gold_and_answer() -> None:
    ctx = JudgeAnswerContext(question="When?", gold="7 May 2023", answer="on 7 May 2023")
    [_, user] = judge_answer_v1(ctx)
    assert "CORRECT" in user.content and "7 May 2023" in user.content
    lm = scripted(Decisions())  # CORRECT when the gold's words are all in the answer
    runner = TaskRunner(lm)
    assert await judge(runner, "When?", "7 May 2023", "It was on 7 May 2023.") is True
    assert await judge(runner, "When?", "7 May 2023", "In June.") is False
