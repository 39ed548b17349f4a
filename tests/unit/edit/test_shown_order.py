"""Prompts that do not depend on what does not matter (issue 39, item 3): the candidates in a
fixed order, and a document decided again asks the LM only the prompts that changed."""

from __future__ import annotations

import pytest
from fixtures.decisions import Decisions
from fixtures.editing import Harness, doc

from factstream.edit.conflicts import conflict
from factstream.edit.pipeline import edit_document, retrieve, shown_order

DECISIONS = Decisions(
    extract={
        "[d1]": ["The red line runs.", "The blue line runs."],
        "[d2]": ["The green line runs."],
        "[d3]": ["The red line stopped."],
    },
    replace={"[d3]": {"red line runs": "The red line stopped."}},
    reinforce={"blue line"},
    whole_prompt=True,
)


async def _seeded(mode: str) -> Harness:
    harness = Harness(DECISIONS, classify_mode=mode)
    await harness.feed(doc("[d1] The red and the blue line.", 1, "d1"))
    return harness


async def test_the_candidates_are_shown_oldest_first_then_by_text() -> None:
    harness = await _seeded("batched")
    await harness.feed(doc("[d2] The green line.", 2, "d2"))
    later = doc("[d3] The red line stopped; the blue and green lines run.", 3, "d3")
    plan = await edit_document(later, harness.ctx)
    hits = plan.retrieved
    assert len(hits) == 3
    keys = [(hit.fact.first_seen, hit.fact.text) for hit in hits]
    assert keys == sorted(keys)
    # Another ranking of the same candidates is the same prompt: no conflict to decide on.
    assert shown_order(list(reversed(hits))) == hits
    now = await retrieve(later, harness.ctx, {}, plan.queries)
    assert conflict(hits, now, later.timestamp) is None


@pytest.mark.parametrize("mode", ["per_fact", "batched"])
async def test_a_fact_added_elsewhere_asks_again_only_what_its_prompt_changes(mode: str) -> None:
    harness = await _seeded(mode)
    later = doc("[d3] The red line stopped; the blue and green lines run.", 3, "d3")
    first = await edit_document(later, harness.ctx)  # on the two facts of d1
    assert len(first.retrieved) == 2
    await harness.feed(doc("[d2] The green line.", 2, "d2"))  # adds a third candidate
    now = await retrieve(later, harness.ctx, {}, first.queries)
    assert len(now) == 3
    asked = len(harness.lm.requests)
    again = await edit_document(later, harness.ctx, retrieved=now, reuse=first)
    tasks = [r.prompt.split(".")[0] for r in harness.lm.requests[asked:]]
    fresh = await edit_document(later, harness.ctx, retrieved=now)  # what serial shows it
    assert again.planned == fresh.planned and again.labels == fresh.labels
    if mode == "per_fact":
        # Only the new fact's classification; the red line's rewrite shows the facts still
        # true, which now include the green line: asked again too.
        assert sorted(tasks) == ["classify_fact", "rewrite_fact"]
    else:
        assert sorted(tasks) == ["classify_facts", "rewrite_fact"]
    assert "extract_facts" not in tasks  # kept, as before
    # Decided again on the same candidates: nothing is asked at all.
    asked = len(harness.lm.requests)
    same = await edit_document(later, harness.ctx, retrieved=now, reuse=again)
    assert len(harness.lm.requests) == asked
    assert same.planned == again.planned
    assert sum(u.total_tokens for u in same.usage.values()) == 0
