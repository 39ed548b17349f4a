"""The evidence-rank analysis: ranks, the named speaker, re-rankings, the fusion bound."""

from __future__ import annotations

from factstream_lab.eval.locomo.ranks import (
    QuestionRanks,
    named_speaker,
    rank_of,
    reranked,
    summarize,
)

BEFORE = {"D1:2": "D1:1", "D1:3": "D1:2", "D1:4": "D1:3"}
SPEAKER = {"D1:1": "Ann", "D1:2": "Bo", "D1:3": "Ann", "D1:4": "Bo"}


def test_rank_is_one_based_and_none_when_absent() -> None:
    assert rank_of(["D1:1", "D1:2"], "D1:2") == 2
    assert rank_of(["D1:1"], "D1:9") is None


def test_the_speaker_named_is_the_one_whose_first_name_is_a_word_of_the_question() -> None:
    assert named_speaker("What did Ann paint?", ("Ann Lee", "Bo")) == "Ann Lee"
    assert named_speaker("What did Ann tell Bo?", ("Ann", "Bo")) is None
    assert named_speaker("What did Annabel paint?", ("Ann", "Bo")) is None


def test_a_reply_takes_a_share_of_the_turn_before_and_the_speaker_a_bonus() -> None:
    scored = [("D1:1", 0.9), ("D1:4", 0.3), ("D1:3", 0.2)]
    plain = reranked(scored, BEFORE, SPEAKER, named=None)
    assert plain[:3] == ["D1:1", "D1:4", "D1:3"]
    # The turn after D1:1 (D1:2, not retrieved) is a candidate, lifted by D1:1's score.
    lifted = reranked(scored, BEFORE, SPEAKER, named=None, neighbour_share=0.5)
    assert lifted.index("D1:2") < lifted.index("D1:4")
    ann = reranked(scored, BEFORE, SPEAKER, named="Ann", speaker_bonus=0.4)
    assert ann.index("D1:3") < ann.index("D1:4")


def _question(
    category: int, hybrid: list[str], keywords: list[str], dense: list[str]
) -> QuestionRanks:
    q = QuestionRanks("c", category, "What did Ann do?", ("D1:3",), "Ann")
    q.lists = {
        "hybrid": [(t, 1.0 - i / 100) for i, t in enumerate(hybrid)],
        "keywords": [(t, 1.0) for t in keywords],
        "embedding": [(t, 1.0) for t in dense],
    }
    return q


def test_the_fusion_bound_counts_turns_with_a_keyword_or_a_top_embedding_rank() -> None:
    filler = [f"D9:{i}" for i in range(20)]
    reachable = _question(4, ["D1:3"], ["D1:3"], filler)  # a keyword
    near = _question(4, filler, [], ["D1:3", *filler])  # the embedding's first
    lost = _question(4, filler, [], [*filler, "D1:3"])  # no word, 21st by meaning
    summary = summarize([reachable, near, lost], {"c": BEFORE}, {"c": SPEAKER})["4"]
    assert summary["fusion_bound_at_10"] == round(2 / 3, 4)
    assert summary["evidence_turns_without_a_keyword"] == round(2 / 3, 4)
    assert summary["recall"]["hybrid"]["at_10"] == round(1 / 3, 4)
    assert summary["evidence_said_by_the_named_speaker"] == 1.0
    assert summary["missed_turns"] == 2
