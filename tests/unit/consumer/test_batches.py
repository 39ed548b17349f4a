"""Edits spread over partitions come out as whole batches, in their documents' input order."""

from __future__ import annotations

from datetime import UTC, datetime

from fixtures.changelog_stream import synthetic_batches

from factstream.consumer import BatchAssembler, ChangelogEntry
from factstream.topics.records import FactEdit

AT = datetime(2024, 1, 1, tzinfo=UTC)


def _entries(batch: list[FactEdit], offset: int) -> list[ChangelogEntry]:
    return [ChangelogEntry(i % 3, offset + i, AT, e.fact_id, e) for i, e in enumerate(batch)]


def _sized(batches: list[list[FactEdit]], size: int) -> list[list[FactEdit]]:
    return [b for b in batches if len(b) == size]


def test_a_batch_goes_only_when_whole_and_its_offsets_are_held_until_then() -> None:
    [batch, *_] = _sized(synthetic_batches(["desk"], 60), 3)
    assembler = BatchAssembler()
    entries = _entries(batch, 100)
    for entry in entries[:2]:
        assembler.add(entry)
        assembler.add(entry)  # a copy changes nothing
    assert assembler.ready() == []
    assert assembler.held() == {0: 100, 1: 101}
    assembler.add(entries[2])
    assert assembler.ready() == [batch]
    assert assembler.held() == {} and len(assembler) == 0


def test_whole_batches_wait_behind_an_earlier_incomplete_document_of_their_partition() -> None:
    batches = synthetic_batches(["desk", "sports"], 200)
    desk = [b for b in batches if b[0].namespace == "desk"]
    sports = [b for b in batches if b[0].namespace == "sports"]
    first, second = desk[0], desk[1]
    assert len(first) > 1
    assembler = BatchAssembler()
    for entry in _entries(second, 10) + _entries(first, 20)[:-1] + _entries(sports[0], 30):
        assembler.add(entry)
    # The second desk document is whole but waits for the first; sports is independent.
    assert assembler.ready() == [sports[0]]
    assembler.add(_entries(first, 20)[-1])
    assert assembler.ready() == [first, second]


def test_a_limit_hands_out_the_first_batches_and_keeps_the_rest() -> None:
    batches = synthetic_batches(["desk"], 40)[:4]
    assembler = BatchAssembler()
    for offset, batch in enumerate(reversed(batches)):
        for entry in _entries(batch, offset * 10):
            assembler.add(entry)
    assert assembler.ready(limit=3) == batches[:3]
    assert set(assembler.held()) and len(assembler) == 1
    assert assembler.ready(limit=3) == batches[3:]
