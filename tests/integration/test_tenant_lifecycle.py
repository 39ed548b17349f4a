"""Idle namespaces made inactive in the real Weaviate, back at their next use (issue 40).

A namespace unused for FACTSTREAM_STORE_TENANT_IDLE_S has its tenants made INACTIVE by the
sweep (``WeaviateFactStore.deactivate_idle``); a search, a count or a write afterwards finds
its facts as before (Weaviate's auto tenant activation); ``factstream rebuild`` rebuilds an
inactive namespace from the changelog; and what the store keeps per namespace is bounded.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from datetime import UTC, datetime

import pytest
import weaviate
from fixtures.stack import StackFactory
from unit.store.builders import make_fact, stored

from factstream.config import Settings, StoreSettings
from factstream.edit.materializer import Materializer
from factstream.embed.fake import HashingEmbedder
from factstream.store import weaviate_store
from factstream.store.base import AppliedBatch, FactCounts
from factstream.store.pools import pool_of
from factstream.store.schema import collections_for
from factstream.store.weaviate_store import WeaviateFactStore
from factstream.streams.changelog import ChangelogPublisher
from factstream.temporal.intervals import ValidInterval
from factstream.topics.records import FactEdit, edit_id_for, fact_id_for

pytestmark = pytest.mark.integration

IDLE_S = 1.0
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _statuses(client: weaviate.WeaviateClient, prefix: str) -> dict[str, str]:
    """Each tenant's activity status, in both collections (name -> 'facts/batches')."""
    names = collections_for(prefix)
    facts = client.collections.use(names.facts.name).tenants.get()
    batches = client.collections.use(names.batches.name).tenants.get()
    return {
        name: f"{tenant.activity_status.value}/"
        + (batches[name].activity_status.value if name in batches else "-")
        for name, tenant in facts.items()
    }


async def _open(
    settings: Settings, prefix: str, idle_s: float, pools: int = 0
) -> WeaviateFactStore:
    config = StoreSettings(collection_prefix=prefix, tenant_idle_s=idle_s, pools=pools)
    return await WeaviateFactStore.open(settings.weaviate, config)


async def _search(store: WeaviateFactStore, namespace: str) -> list[str]:
    hits = await store.search(
        namespace, "", [1.0, 0.0, 0.0], as_of=None, top_k=5, min_similarity=-1.0, alpha=1.0
    )
    return sorted(h.fact.fact_id for h in hits)


async def test_idle_namespaces_go_inactive_and_come_back_unnoticed(
    weaviate_settings: Settings, store_prefix: str, weaviate_client: weaviate.WeaviateClient
) -> None:
    store = await _open(weaviate_settings, store_prefix, IDLE_S)
    try:
        for ns in ("quiet", "busy", "theirs"):
            await store.upsert(ns, [stored(make_fact("f1", namespace=ns))])
            await store.record_batch(ns, AppliedBatch("d1", "d1", 1))
        # Not before the store has been open for the idle time: it cannot know.
        assert (await store.deactivate_idle(lambda ns: True)).deactivated == []
        await asyncio.sleep(IDLE_S + 0.2)
        await store.count_facts("busy")  # used again just now: stays active
        swept = await store.deactivate_idle(lambda ns: ns != "theirs")
        assert swept.deactivated == ["quiet"] and swept.active == 1
        assert _statuses(weaviate_client, store_prefix) == {
            "quiet": "INACTIVE/INACTIVE",
            "busy": "ACTIVE/ACTIVE",
            "theirs": "ACTIVE/ACTIVE",  # another worker's to sweep
        }
        # The caller notices nothing: the namespace exists, reads and writes find it.
        assert await store.has_namespace("quiet")
        assert await _search(store, "quiet") == ["f1"]
        assert _statuses(weaviate_client, store_prefix)["quiet"].startswith("ACTIVE")
        await asyncio.sleep(IDLE_S + 0.2)
        swept = await store.deactivate_idle(lambda ns: True)
        assert sorted(swept.deactivated) == ["busy", "quiet", "theirs"]
        await store.upsert("quiet", [stored(make_fact("f2", namespace="quiet"))])
        assert await store.count_facts("quiet") == FactCounts(2, 0)
        assert await store.applied_batch("busy", "d1") == AppliedBatch("d1", "d1", 1)
        assert await store.count_facts("theirs") == FactCounts(1, 0)
    finally:
        await store.close()


async def test_a_sweep_without_listing_makes_inactive_what_went_idle_here(
    weaviate_settings: Settings, store_prefix: str, weaviate_client: weaviate.WeaviateClient
) -> None:
    """The worker's usual sweep (``listing=False``) deactivates the namespaces this store
    used that went idle since, without listing tenants: one another process activated
    stays active until a sweep that lists; the first sweep lists whatever it is asked."""
    other = await _open(weaviate_settings, store_prefix, 2 * IDLE_S)
    store = await _open(weaviate_settings, store_prefix, 2 * IDLE_S)
    try:
        await other.upsert("elsewhere", [stored(make_fact("f1", namespace="elsewhere"))])
        await asyncio.sleep(2 * IDLE_S + 0.2)
        # Nothing went idle under this store's eyes yet: its first sweep lists.
        assert (await store.deactivate_idle(lambda ns: True, listing=False)).deactivated == [
            "elsewhere"
        ]
        for ns in ("done", "again", "elsewhere"):
            await store.upsert(ns, [stored(make_fact("f1", namespace=ns))])
        await other.upsert("theirs", [stored(make_fact("f1", namespace="theirs"))])
        await asyncio.sleep(2 * IDLE_S + 0.2)
        await store.count_facts("again")  # used again: stays active
        swept = await store.deactivate_idle(lambda ns: ns != "elsewhere", listing=False)
        assert swept.deactivated == ["done"] and swept.active == 1
        statuses = _statuses(weaviate_client, store_prefix)
        assert statuses["done"] == "INACTIVE/INACTIVE"
        assert statuses["again"].startswith("ACTIVE")  # used again
        assert statuses["elsewhere"].startswith("ACTIVE")  # not owned
        assert statuses["theirs"] == "ACTIVE/ACTIVE"  # another store used it: a listing finds it
        await asyncio.sleep(2 * IDLE_S + 0.2)
        swept = await store.deactivate_idle(lambda ns: True, listing=True)
        assert sorted(swept.deactivated) == ["again", "elsewhere", "theirs"]
        assert await store.count_facts("done") == FactCounts(1, 0)  # comes back unnoticed
    finally:
        await other.close()
        await store.close()


async def test_a_read_is_prepared_by_activating_the_inactive_tenant(
    weaviate_settings: Settings, store_prefix: str, weaviate_client: weaviate.WeaviateClient
) -> None:
    """``prepare_read`` (run while a question is embedded) activates an inactive tenant,
    with or without a valid time to check, and a missing namespace stays missing."""
    store = await _open(weaviate_settings, store_prefix, IDLE_S)
    try:
        for ns in ("asked", "searched"):
            await store.upsert(ns, [stored(make_fact("f1", namespace=ns))])
        await asyncio.sleep(IDLE_S + 0.2)
        assert sorted((await store.deactivate_idle(lambda ns: True)).deactivated) == [
            "asked",
            "searched",
        ]
        await store.prepare_read("asked", valid=ValidInterval(T0, None))
        await store.prepare_read("searched", valid=None)
        await store.prepare_read("nobody", valid=None)
        statuses = _statuses(weaviate_client, store_prefix)
        assert statuses["asked"].startswith("ACTIVE")
        assert statuses["searched"].startswith("ACTIVE")
        assert "nobody" not in statuses
        assert await _search(store, "asked") == ["f1"]
    finally:
        await store.close()


async def test_what_the_store_keeps_per_namespace_is_bounded(
    weaviate_settings: Settings, store_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(weaviate_store, "_REMEMBER", 4)
    store = await _open(weaviate_settings, store_prefix, 0.5)
    try:
        for i in range(12):
            ns = f"ns-{i}"
            await store.upsert(ns, [stored(make_fact("f1", namespace=ns))])
            await _search(store, ns)
        assert len(store._tenants.known) <= 4  # noqa: SLF001 - the bound under test
        assert len(store._tenants) == 0  # noqa: SLF001 - no creation outlives its request
        assert len(store._writing) == 0  # noqa: SLF001 - no lock outlives its writers
        assert 0 < len(store.last_use) <= 12
        await asyncio.sleep(0.6)
        store.last_use.prune()
        assert len(store.last_use) == 0  # idle ones are forgotten
        assert await _search(store, "ns-0") == ["f1"]  # a forgotten tenant is found again
    finally:
        await store.close()


async def test_new_namespaces_expected_together_share_one_request(
    weaviate_settings: Settings, store_prefix: str, weaviate_client: weaviate.WeaviateClient
) -> None:
    store = await _open(weaviate_settings, store_prefix, 0)
    names = [f"conv-{i}" for i in range(7)]
    try:
        for ns in names:
            store.expect(ns)  # as the worker's window reads their documents ahead
        await asyncio.gather(
            *(store.upsert(ns, [stored(make_fact("f1", namespace=ns))]) for ns in names)
        )
        assert store._tenants.requests == 1  # noqa: SLF001 - one request for the seven
        statuses = _statuses(weaviate_client, store_prefix)
        assert all(statuses[ns] == "ACTIVE/ACTIVE" for ns in names)  # both collections
        for ns in names:
            assert await _search(store, ns) == ["f1"]
            await store.record_batch(ns, AppliedBatch("d1", "b1", 1))
            assert await store.applied_batch(ns, "d1") == AppliedBatch("d1", "b1", 1)
        assert store._tenants.requests == 1  # noqa: SLF001 - known since: none again
    finally:
        await store.close()


def _batch(ns: str, doc: str, texts: list[str]) -> list[FactEdit]:
    return [
        FactEdit.model_validate(
            {
                "edit_id": edit_id_for(ns, doc, pos),
                "namespace": ns,
                "fact_id": fact_id_for(ns, doc, pos),
                "op": "add",
                "text": text,
                "truth": True,
                "event_time": T0,
                "document_id": doc,
                "batch": {"id": doc, "size": len(texts), "position": pos},
                "input": {"topic": "docs", "partition": 0, "offset": pos},
                "decided_by": {"model": "m", "prompt_version": "p.v1"},
                "created_at": T0,
            }
        )
        for pos, text in enumerate(texts)
    ]


@pytest.mark.parametrize("pools", [0, 3])
async def test_an_inactive_namespace_is_rebuilt_from_the_changelog(
    stack_factory: StackFactory, weaviate_client: weaviate.WeaviateClient, pools: int
) -> None:
    """Pooled too (FACTSTREAM_STORE_POOLS): the namespace's pool is the inactive tenant."""
    stack = await stack_factory(FACTSTREAM_STORE_POOLS=str(pools))
    ns = "dormant"
    tenant = pool_of(ns, pools) if pools else ns
    publisher = ChangelogPublisher(stack.settings.kafka)
    store = await _open(stack.settings, stack.settings.store.collection_prefix, 0.5, pools)
    await publisher.start()
    try:
        materializer = Materializer(store, HashingEmbedder(dim=384))
        for doc, texts in (("d1", ["Ann is the mayor.", "Bo runs."]), ("d2", ["Cy swims."])):
            edits = _batch(ns, doc, texts)
            await publisher.publish_batch(edits)
            assert (await materializer.apply(edits)).skipped == []
        await asyncio.sleep(0.6)
        assert (await store.deactivate_idle(lambda _: True)).deactivated == [tenant]
    finally:
        await publisher.stop()
        await store.close()
    prefix = stack.settings.store.collection_prefix
    assert _statuses(weaviate_client, prefix)[tenant] == "INACTIVE/INACTIVE"
    run = subprocess.run(
        [sys.executable, "-m", "factstream", "rebuild", "--namespace", ns],
        env={**os.environ, **stack.env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 batches" in run.stdout
    facts = await stack.facts(ns)
    assert sorted(f.text for f in facts) == ["Ann is the mayor.", "Bo runs.", "Cy swims."]
