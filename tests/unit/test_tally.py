"""A commit's tally counts its own work and the tasks it starts, never another task's."""

from __future__ import annotations

import asyncio
from collections import Counter

from factstream.embed.cache import CachedEmbedder
from factstream.embed.fake import HashingEmbedder
from factstream.tally import Tally, count, counting, line


async def test_work_of_started_tasks_counts_and_work_of_other_tasks_does_not() -> None:
    other_may_count = asyncio.Event()

    async def other() -> None:  # started before the tally opened: not its work
        await other_may_count.wait()
        count("weaviate_read", 5)

    outside = asyncio.create_task(other())
    tally: Tally = Counter()
    with counting(tally):
        count("weaviate_read")
        await asyncio.gather(_child(), asyncio.create_task(_child()))
        other_may_count.set()
        await outside
    count("weaviate_write")  # after the block: not counted
    assert tally == Counter({"weaviate_read": 1, "weaviate_write": 2})
    assert line(tally) == "weaviate_read=1 weaviate_write=2"


async def _child() -> None:
    await asyncio.sleep(0)
    count("weaviate_write")


async def test_the_embedder_cache_counts_what_reached_the_model() -> None:
    embedder = CachedEmbedder(HashingEmbedder(), questions=0, texts=10)
    await embedder.embed_batch(["a"])
    tally: Tally = Counter()
    with counting(tally):
        await embedder.embed_batch(["a", "b", "b"])
    assert tally == Counter({"embed_cached": 2, "embed_model": 1})
