"""examples/search_index.py keeps an index of the facts that hold now, resuming where it was."""

from __future__ import annotations

from pathlib import Path

from fixtures.changelog_stream import fold, synthetic_batches
from fixtures.stack import StackFactory

from examples.search_index import SearchIndex, update_index
from factstream.streams.changelog import ChangelogPublisher
from factstream.topics.records import FactEdit


async def test_the_index_holds_the_facts_that_hold_now(
    stack_factory: StackFactory, tmp_path: Path
) -> None:
    stack = await stack_factory()
    batches = synthetic_batches(["desk", "sports"], 160, seed=17)
    half = len(batches) // 2
    index = SearchIndex(tmp_path / "index.sqlite")
    publisher = ChangelogPublisher(stack.settings.kafka)
    await publisher.start()
    try:
        for batch in batches[:half]:
            await publisher.publish_batch(batch)
        first = await update_index(index, stack.settings.kafka, ["desk"])
        for batch in batches[half:]:
            await publisher.publish_batch(batch)
        again = SearchIndex(tmp_path / "index.sqlite")  # a restart: resumes at its offsets
        second = await update_index(again, stack.settings.kafka, ["desk"])
    finally:
        await publisher.stop()

    def desk(part: list[list[FactEdit]]) -> int:
        return sum(len(b) for b in part if b[0].namespace == "desk")

    assert (first, second) == (desk(batches[:half]), desk(batches[half:]))
    holds = {
        fact.fact_id: fact.text
        for fact in fold(batches)["desk"].values()
        if fact.truth and fact.valid_to is None and fact.replaced_by is None
    }
    assert len(holds) >= 3  # the stream invalidates, rewrites and closes most facts
    assert dict(index.search("Fact", limit=1000)) == holds
