"""The materializer on the real Weaviate store: a batch applied twice changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime

import pytest
import weaviate

from factstream.config import Settings, StoreSettings
from factstream.edit.materializer import Materializer
from factstream.embed.fake import HashingEmbedder
from factstream.store.schema import collections_for
from factstream.store.weaviate_store import WeaviateFactStore
from factstream.topics.records import EditOp, FactEdit, edit_id_for, fact_id_for

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def edit(doc: str, pos: int, size: int, op: EditOp, fact: str | None = None) -> FactEdit:
    return FactEdit(
        edit_id=edit_id_for("desk", doc, pos),
        namespace="desk",
        fact_id=fact or fact_id_for("desk", doc, pos),
        op=op,
        text=f"fact {doc}/{pos}",
        truth=op is not EditOp.INVALIDATE,
        event_time=T0.replace(day=int(doc[-1])),
        document_id=doc,
        batch={"id": f"{doc}@b", "size": size, "position": pos},  # type: ignore[arg-type]
        input={"topic": "docs", "partition": 0, "offset": int(doc[-1])},  # type: ignore[arg-type]
        decided_by={"model": "m", "prompt_version": "p.v1"},  # type: ignore[arg-type]
        created_at=T0,
    )


@pytest.fixture
async def store(
    weaviate_settings: Settings,
    weaviate_client: weaviate.WeaviateClient,
    unique_name: Callable[[str], str],
) -> AsyncIterator[WeaviateFactStore]:
    prefix = unique_name("Mat")
    opened = await WeaviateFactStore.open(
        weaviate_settings.weaviate, StoreSettings(collection_prefix=prefix)
    )
    yield opened
    await opened.close()
    names = collections_for(prefix)
    weaviate_client.collections.delete([names.facts.name, names.batches.name])


async def test_applying_a_batch_again_changes_nothing(store: WeaviateFactStore) -> None:
    materializer = Materializer(store, HashingEmbedder())
    first = [edit("d1", 0, 2, EditOp.ADD), edit("d1", 1, 2, EditOp.ADD)]
    assert (await materializer.apply(first)).applied
    target = first[0].fact_id
    second = [edit("d2", 0, 1, EditOp.INVALIDATE, fact=target)]
    assert (await materializer.apply(second)).applied
    before = (await store.list_facts("desk", include_false=True)).facts

    again = await materializer.apply(second)
    replayed = await materializer.apply(first)
    assert not again.applied and not replayed.applied
    assert (await store.list_facts("desk", include_false=True)).facts == before
    facts = {f.fact_id: f for f in before}
    assert [h.truth for h in facts[target].history] == [True, False]
    assert (await store.applied_batch("desk", "d2")) is not None
