"""The demo's mirror on real Kafka, PostgreSQL and Weaviate (``factstream_lab.demo.mirror``).

As in ``factstream demo``: the mirror follows one namespace live while batches are
published on the changelog and applied into the knowledge base; then it is stopped, caught
up, and checked against the knowledge base. Another namespace on the same changelog stays
out of it.
"""

from __future__ import annotations

from collections.abc import Callable

import psycopg
from fixtures.changelog_stream import fold, synthetic_batches
from fixtures.stack import StackFactory

from factstream.edit.materializer import Materializer
from factstream.embed.fake import HashingEmbedder
from factstream.mirror.store import RoundResult
from factstream.streams.changelog import ChangelogPublisher
from factstream_lab.demo.mirror import DemoMirror

DEMO, OTHER = "demo-ns", "other-ns"


async def test_the_demo_s_mirror_catches_up_and_equals_the_knowledge_base(
    stack_factory: StackFactory, database_factory: Callable[[], str]
) -> None:
    stack = await stack_factory(FACTSTREAM_MIRROR_POLL_S="0.2")
    batches = synthetic_batches([DEMO, OTHER], 80, seed=13)
    dsn = database_factory()
    rounds: list[RoundResult] = []
    mirror = DemoMirror(stack.settings, DEMO, dsn, on_round=lambda r, _: rounds.append(r))
    await mirror.start()
    publisher, store = ChangelogPublisher(stack.settings.kafka), await stack.store()
    await publisher.start()
    try:
        materializer = Materializer(store, HashingEmbedder(dim=32))
        for batch in batches:  # as the worker does: publish, then apply
            await publisher.publish_batch(batch)
            await materializer.apply(batch)
        assert mirror.alive()
        report = await mirror.finish()
        page = await store.list_facts(DEMO, include_false=True, limit=500)
    finally:
        await mirror.stop()
        await publisher.stop()
        await store.close()
    changelog = [e for e in await stack.changelog() if e.namespace == DEMO]
    demo_edits = sum(len(b) for b in batches if b[0].namespace == DEMO)
    assert len(changelog) == demo_edits > 20
    assert {fact.fact_id: fact for fact in page.facts} == fold(batches)[DEMO]
    check = await mirror.check(page.facts, changelog)
    assert check.caught_up and check.equal, check
    assert check.facts_true + check.facts_false == len(page.facts)
    assert check.facts_false == sum(not f.truth for f in page.facts) > 0
    assert (report.edits, report.duplicates, report.dead_letters) == (demo_edits, 0, 0)
    assert sum(r.edits for r in rounds) == demo_edits
    with psycopg.connect(dsn) as conn:
        namespaces = conn.execute("SELECT DISTINCT namespace FROM facts").fetchall()
    assert namespaces == [(DEMO,)]
