"""Inside one document the independent LM calls run at once; the batch is unchanged."""

from __future__ import annotations

from fixtures.decisions import Decisions
from fixtures.editing import NOW, SOURCE, Harness, doc
from fixtures.slow_lm import SlowLM

from factstream.edit.pipeline import EditContext, edit_document, to_records
from factstream.lm.tasks.runner import TaskRunner

DECISIONS = Decisions(
    extract={
        "[d1]": ["The red line runs.", "The blue line runs.", "The green line runs."],
        "[d2]": ["All lines stopped for the strike."],
    },
    outdated={"red line": "The red line stopped.", "blue line": None},
    false={"green line": "The green line never ran."},
)


async def _batches(harness: Harness) -> list[list[tuple[str, str | None, str]]]:
    out = []
    for text, day, doc_id in (("[d1] Lines open.", 1, "d1"), ("[d2] A strike.", 2, "d2")):
        edits = await harness.feed(doc(text, day, doc_id))
        out.append([(e.op.value, e.replaces, e.text) for e in edits])
    return out


async def test_classification_extraction_and_rewrites_run_at_once_same_batch() -> None:
    serial = await _batches(Harness(DECISIONS))  # the ScriptedLM answers without waiting

    concurrent = Harness(DECISIONS)
    slow = SlowLM(DECISIONS)
    concurrent.ctx = EditContext(
        concurrent.store, concurrent.embedder, TaskRunner(slow), concurrent.ctx.settings
    )
    assert await _batches(concurrent) == serial
    # The candidates' edits in the order the LM is shown them (oldest first, then by text:
    # blue, green, red here), then the new fact.
    assert [op for op, _, _ in serial[1]] == ["close", "rewrite", "rewrite", "add"]
    assert slow.overlap("classify_facts", "extract_facts")
    assert slow.overlap("rewrite_fact", "rewrite_fact")  # three rewrites, together
    assert slow.most == 3


async def test_over_the_blast_radius_the_plan_is_empty_although_extraction_ran() -> None:
    harness = Harness(DECISIONS, max_edits=1)
    await harness.feed(doc("[d1] Lines open.", 1, "d1"))
    plan = await edit_document(doc("[d2] A strike.", 2, "d2"), harness.ctx)
    assert plan.over_limit and plan.planned == []
    assert to_records(plan, SOURCE, now=NOW) == []
