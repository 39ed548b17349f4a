"""The rule planner reads "the R of the R of E" and "E's R's R" questions into hops."""

from __future__ import annotations

import pytest

from factstream.ask.hop_rules import HopPlan, hop_question, plan_by_rules


@pytest.mark.parametrize(
    ("question", "anchor", "relations"),
    [
        (
            "Who is the chief executive of Umar Castillo's employer?",
            "Umar Castillo",
            ("employer", "chief executive"),
        ),
        (
            "Where does the chief executive of Umar Castillo's employer live?",
            "Umar Castillo",
            ("employer", "chief executive", "residence"),
        ),
        ("Who employs Umar Castillo's spouse?", "Umar Castillo", ("spouse", "employer")),
        (
            "Where is Umar Castillo's employer headquartered?",
            "Umar Castillo",
            ("employer", "headquarters location"),
        ),
        ("What is Ana's manager's job title?", "Ana", ("manager", "job title")),
        ("Who is the CEO of the company Ana works for?", "Ana", ("employer", "CEO")),
        ("who is the spouse of the manager of Bo Lind", "Bo Lind", ("manager", "spouse")),
        ("Who is the president of the Bank of America?", "Bank of America", ("president",)),
        ("Where does Ana live?", "Ana", ("residence",)),
    ],
)
def test_shapes_read_into_anchor_and_relations(
    question: str, anchor: str, relations: tuple[str, ...]
) -> None:
    assert plan_by_rules(question) == HopPlan(anchor, relations)


@pytest.mark.parametrize(
    "question",
    ["Is it raining?", "Who won?", "Who was X's manager in 2019?", "What is the capital?", ""],
)
def test_what_no_rule_reads_is_not_planned(question: str) -> None:
    assert plan_by_rules(question) is None


def test_a_hop_question_names_relation_and_entity() -> None:
    assert hop_question("Ana Silva", "employer") == "What is the employer of Ana Silva?"
    assert plan_by_rules(hop_question("Ana Silva", "employer")) == HopPlan(
        "Ana Silva", ("employer",)
    )
