"""The blast-radius check on a finished plan: only retrieved facts, at most max_edits false."""

from __future__ import annotations

from fixtures.hits import T, hit

from factstream.edit.pipeline import EditPlan, PlannedEdit, bound_problem
from factstream.topics.records import DecidedBy, Document, EditOp

BY = DecidedBy(model="m", prompt_version="p.v1")
DOC = Document(
    id="d", namespace="desk", kind="article", timestamp=T, text="Fact a, b and c are news."
)  # type: ignore[arg-type]


def plan(*edits: tuple[EditOp, str | None], over_limit: bool = False) -> EditPlan:
    planned = [PlannedEdit(op, "text", BY, fact_id) for op, fact_id in edits]
    return EditPlan(DOC, [hit("a"), hit("b"), hit("c")], [], planned, over_limit=over_limit)


def test_a_plan_within_the_bound_passes() -> None:
    ok = plan((EditOp.INVALIDATE, "a"), (EditOp.REWRITE, "b"), (EditOp.REINFORCE, "c"))
    assert bound_problem(ok, max_edits=2) is None
    assert bound_problem(plan((EditOp.ADD, None)), max_edits=0) is None


def test_an_edit_of_a_fact_retrieval_did_not_return_is_refused() -> None:
    outside = plan((EditOp.REINFORCE, "a"), (EditOp.INVALIDATE, "zz"))
    assert bound_problem(outside, max_edits=5) == "edits 1 facts retrieval did not return: zz"


def test_more_false_facts_than_the_bound_is_refused() -> None:
    many = plan((EditOp.INVALIDATE, "a"), (EditOp.REWRITE, "b"), (EditOp.INVALIDATE, "c"))
    assert bound_problem(many, max_edits=2) == "makes 3 facts false (limit 2)"
    over = plan(over_limit=True)
    over.labels = ["make_false"] * 3
    assert bound_problem(over, max_edits=2) == "makes 3 facts false (limit 2)"
