"""Evidence recall@k and the per-category summary."""

from __future__ import annotations

import pytest

from factstream_lab.eval.locomo.score import QuestionScore, by_category, evidence_recall


def test_recall_counts_the_evidence_the_first_k_results_cite() -> None:
    cited = [{"D1:1"}, set(), {"D1:2", "D2:5"}, {"D3:3"}]
    assert evidence_recall(("D1:2", "D3:3"), cited, 1) == 0.0
    assert evidence_recall(("D1:2", "D3:3"), cited, 3) == 0.5
    assert evidence_recall(("D1:2", "D3:3"), cited, 10) == 1.0
    assert evidence_recall(("D1:2",), [], 5) == 0.0
    with pytest.raises(ValueError, match="without evidence"):
        evidence_recall((), cited, 5)
    with pytest.raises(ValueError, match="at least 1"):
        evidence_recall(("D1:2",), cited, 0)


def _score(category: int, at_5: float, at_10: float, time: bool | None = None) -> QuestionScore:
    score = QuestionScore("7", category, "q", "a", ("D1:1",), time=time, time_word=time is True)
    score.recall = {"single": {5: at_5, 10: at_10}, "multi_hop": {5: 0.0, 10: at_10 / 2}}
    return score


def test_categories_average_their_questions_and_temporal_adds_time() -> None:
    scores = [
        _score(1, 1.0, 1.0),
        _score(1, 0.0, 0.5),
        _score(2, 1.0, 1.0, time=True),
        _score(2, 0.0, 1.0, time=False),
        _score(2, 0.0, 0.0, time=None),  # gold names no interval
        QuestionScore("7", 4, "no evidence", None, ()),
    ]
    summary = by_category(scores, ["single", "multi_hop"], "single")
    assert set(summary) == {"1", "2", "3", "4", "5", "all"}
    one = summary["1"]
    assert (one["questions"], one["with_evidence"]) == (2, 2)
    assert (one["evidence_recall_at_5"], one["evidence_recall_at_10"]) == (0.5, 0.75)
    assert one["modes"]["multi_hop"]["at_10"] == 0.375
    two = summary["2"]
    assert two["time_resolved"] == 0.5 and two["time_resolved_with_time_word"] == 1.0
    assert two["time"] == {
        "gold_readable": 2,
        "gold_unreadable": 1,
        "with_time_word": 1,
        "resolved": 1,
    }
    assert "time_resolved" not in one
    four = summary["4"]
    assert (four["questions"], four["with_evidence"], four["evidence_recall_at_10"]) == (1, 0, None)
    assert summary["all"]["with_evidence"] == 5
