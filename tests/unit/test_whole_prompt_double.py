"""The LM double whose judgement depends on the whole prompt (Decisions.whole_prompt, issue 39):
a decision made on other candidates than one at a time shows cannot pass an equivalence
test by chance."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

from fixtures.decisions import Decisions
from fixtures.editing import scripted

from factstream.lm.tasks.editing import (
    classify_facts_batched,
    classify_facts_per_fact,
    rewrite_false_fact,
)
from factstream.lm.tasks.runner import TaskRunner
from factstream.prompts.models import DocumentView

VIEW = DocumentView(text="[doc-1] News of the bridge.", timestamp=datetime(2024, 1, 1, tzinfo=UTC))
FACTS = [f"The bridge has note {i}." for i in range(12)]


async def _labels(decisions: Decisions, facts: list[str]) -> list[str]:
    runner = TaskRunner(scripted(decisions))
    return list((await classify_facts_batched(runner, VIEW, facts)).value)


async def test_off_the_labels_follow_the_rules_alone() -> None:
    plain = Decisions()
    for order in itertools.islice(itertools.permutations(FACTS), 6):
        assert await _labels(plain, list(order)) == ["no_change"] * len(FACTS)


async def test_on_the_same_prompt_gets_the_same_labels_and_another_list_other_ones() -> None:
    whole = Decisions(whole_prompt=True)
    first = await _labels(whole, FACTS)
    assert first == await _labels(whole, FACTS)  # deterministic
    assert set(first) <= {"no_change", "reinforce"}
    # Each fact's label, by fact, for lists that differ from FACTS (order, one fewer).
    by_fact = dict(zip(FACTS, first, strict=True))
    others = [list(reversed(FACTS)), FACTS[1:] + FACTS[:1], FACTS[:-1], FACTS[1:]]
    differs = 0
    for other in others:
        labels = dict(zip(other, await _labels(whole, other), strict=True))
        differs += any(labels[fact] != by_fact[fact] for fact in other)
    assert differs >= 3, "a changed list must change the decision"
    # The rules still win where they say something: a false fact stays false.
    ruled = Decisions(false={"note 2": None}, whole_prompt=True)
    for order in (FACTS, list(reversed(FACTS))):
        labels = dict(zip(order, await _labels(ruled, list(order)), strict=True))
        assert labels[FACTS[2]] == "wrong"


async def test_per_fact_labels_and_rewrites_depend_on_their_own_prompt() -> None:
    whole = Decisions(false={"note": "The bridge had a note."}, whole_prompt=True)
    runner = TaskRunner(scripted(Decisions(whole_prompt=True)))
    many = [f"The bridge has note {i}." for i in range(40)]
    per_fact = (await classify_facts_per_fact(runner, VIEW, many)).value
    alone = [(await classify_facts_per_fact(runner, VIEW, [f])).value[0] for f in many]
    assert per_fact == alone  # a per-fact prompt shows only its fact
    assert "reinforce" in per_fact and "no_change" in per_fact
    rewriter = TaskRunner(scripted(whole))
    rewrites = [
        (await rewrite_false_fact(rewriter, VIEW, FACTS[0], FACTS[1 : 1 + n])).value
        for n in range(8)
    ]
    # The fact still true beside it change the prompt: some rewrites withheld, some not.
    assert any(r is None for r in rewrites) and any(r is not None for r in rewrites)
