"""The materializer embeds only facts whose text changed; the others keep their vectors."""

from __future__ import annotations

from datetime import UTC, datetime

from fixtures import bitemporal
from fixtures.recording import TextRecorder

from factstream.edit.ahead import FactVectors
from factstream.edit.materializer import Materializer
from factstream.embed.fake import HashingEmbedder
from factstream.store.memory import InMemoryFactStore
from factstream.topics.records import EditOp, FactEdit, fact_id_for

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def edit(
    doc: str, pos: int, size: int, op: EditOp, text: str, fact: str = "", **extra: str
) -> FactEdit:
    when = T0.replace(day=int(doc[-1]))
    if op is EditOp.INVALIDATE:  # the shared builder makes true edits only
        made = bitemporal.edit(doc, pos, size, EditOp.REINFORCE, text, when, fact=fact)
        return made.model_copy(update={"op": op, "truth": False})
    return bitemporal.edit(doc, pos, size, op, text, when, fact=fact, **extra)


async def test_only_changed_texts_are_embedded_again() -> None:
    store, embedder = InMemoryFactStore(), TextRecorder()
    materializer = Materializer(store, embedder)
    queen = "The Queen lives at Buckingham Palace."
    mayor = "Sadiq Khan is Mayor of London."
    added = [edit("d1", 0, 2, EditOp.ADD, queen), edit("d1", 1, 2, EditOp.ADD, mayor)]
    await materializer.apply(added)
    assert embedder.texts == [queen, mayor]
    first = await store.get_stored("desk", [e.fact_id for e in added])

    # d2 invalidates the queen fact (its text stays) and rewrites the mayor fact.
    king = "The King lives at Buckingham Palace."
    rewrite = edit(
        "d2",
        1,
        2,
        EditOp.REWRITE,
        king,
        fact=fact_id_for("desk", "d2", 1),
        replaces=added[1].fact_id,
        previous_text=mayor,
    )
    outcome = await materializer.apply(
        [edit("d2", 0, 2, EditOp.INVALIDATE, queen, fact=added[0].fact_id), rewrite]
    )
    assert len(outcome.changed) == 3  # the invalidated, the rewritten and its replacement
    assert embedder.texts == [queen, mayor, king]  # only the new text was embedded
    after = await store.get_stored("desk", [added[0].fact_id, added[1].fact_id, rewrite.fact_id])
    assert after[added[0].fact_id].fact.truth is False
    assert after[added[0].fact_id].vector == first[added[0].fact_id].vector
    assert after[added[1].fact_id].vector == first[added[1].fact_id].vector
    assert list(after[rewrite.fact_id].vector) == embedder.vector(king)
    assert list(after[rewrite.fact_id].vector) != list(after[added[1].fact_id].vector)


async def test_vectors_computed_ahead_are_taken_and_only_the_others_embedded() -> None:
    """Issue 18: a commit embeds its new facts beside its re-check (``FactVectors``)."""
    store, embedder = InMemoryFactStore(), TextRecorder()
    materializer = Materializer(store, embedder)
    queen = "The Queen lives at Buckingham Palace."
    mayor = "Sadiq Khan is Mayor of London."
    added = [edit("d1", 0, 2, EditOp.ADD, queen), edit("d1", 1, 2, EditOp.ADD, mayor)]
    with FactVectors(embedder, [queen, "A text the batch no longer has."]) as ahead:
        await ahead.known()
        assert embedder.texts == [queen, "A text the batch no longer has."]
        await materializer.apply(added, ahead=ahead)
    assert embedder.texts[2:] == [mayor]  # the queen's vector was known
    stored = await store.get_stored("desk", [e.fact_id for e in added])
    plain = await HashingEmbedder().embed_batch([queen, mayor])
    assert [list(stored[e.fact_id].vector) for e in added] == [list(v) for v in plain]
