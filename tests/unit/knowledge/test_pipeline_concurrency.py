"""Inside one document the independent LM calls run at once; the batch is unchanged."""

from __future__ import annotations

import asyncio

from fixtures.decisions import Decisions
from fixtures.editing import NOW, SOURCE, Harness, doc

from factstream.knowledge.pipeline import EditContext, edit_document, to_records
from factstream.lm.base import Completion, CompletionRequest, Usage
from factstream.tasks.runner import TaskRunner


class SlowLM:
    """Answers from ``decisions`` after ``delay`` seconds; records when each task ran."""

    def __init__(self, decisions: Decisions, delay: float = 0.05) -> None:
        self.decisions, self.delay = decisions, delay
        self.spans: list[tuple[str, float, float]] = []  # (task, start, end)
        self.most = self.now = 0

    @property
    def model(self) -> str:
        return "slow"

    async def complete(self, request: CompletionRequest) -> Completion:
        loop = asyncio.get_running_loop()
        start = loop.time()
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            await asyncio.sleep(self.delay)
        finally:
            self.now -= 1
        self.spans.append((str(request.prompt).split(".")[0], start, loop.time()))
        text = self.decisions.answer(request.prompt, request.messages[-1].content)
        return Completion(text, Usage(1, 1), self.model, "stop")

    async def aclose(self) -> None:
        return None

    def overlap(self, a: str, b: str) -> bool:
        """Some call of task ``a`` ran while one of task ``b`` did."""
        return any(
            s1 < e2 and s2 < e1
            for t1, s1, e1 in self.spans
            for t2, s2, e2 in self.spans
            if (t1, t2) == (a, b)
        )


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
    assert [op for op, _, _ in serial[1]] == ["rewrite", "close", "rewrite", "add"]
    assert slow.overlap("classify_facts", "extract_facts")
    assert slow.overlap("rewrite_fact", "rewrite_fact")  # three rewrites, together
    assert slow.most == 3


async def test_over_the_blast_radius_the_plan_is_empty_although_extraction_ran() -> None:
    harness = Harness(DECISIONS, max_edits=1)
    await harness.feed(doc("[d1] Lines open.", 1, "d1"))
    plan = await edit_document(doc("[d2] A strike.", 2, "d2"), harness.ctx)
    assert plan.over_limit and plan.planned == []
    assert to_records(plan, SOURCE, now=NOW) == []
