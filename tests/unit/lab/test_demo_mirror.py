"""The demo's mirror: its check against the knowledge base, and its live run then catch-up.

The check compares by fact id, truth and record; the changelog's republished batches (a
document's batch published twice) are not expected in the mirror. ``DemoMirror`` is run
here with a double of ``run_mirror`` (the real one on Kafka and PostgreSQL:
tests/integration/test_mirror_demo.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import pytest
from fixtures.changelog_stream import fold, synthetic_batches

from factstream.config import KafkaSettings, MirrorSettings, Settings
from factstream.mirror.runner import MirrorReport
from factstream.mirror.store import RoundResult
from factstream.topics.records import FactEdit
from factstream_lab.demo import mirror as demo_mirror
from factstream_lab.demo.mirror import DemoMirror, compare, mirror_lines
from factstream_lab.demo.story import figures_markdown

NS = "desk"


def _stream() -> tuple[list[list[FactEdit]], list[FactEdit]]:
    batches = synthetic_batches([NS], 40, seed=11)
    return batches, [edit for batch in batches for edit in batch]


def _republished(batch: list[FactEdit]) -> list[FactEdit]:
    """The document's batch decided again after a crash, differently: the same edit ids (by
    document and position), another batch id (by content), another text, created later."""
    return [
        edit.model_copy(
            update={
                "text": f"{edit.text} (decided again)",
                "batch": edit.batch.model_copy(update={"id": f"{edit.batch.id}-again"}),
                "created_at": edit.created_at.replace(year=2030),
            }
        )
        for edit in batch
    ]


def test_a_mirror_holding_the_knowledge_base_s_facts_is_equal_and_caught_up() -> None:
    batches, changelog = _stream()
    facts = fold(batches)[NS]
    assert sum(not f.truth for f in facts.values()) > 0 and len(facts) > 10
    check = compare(facts.values(), dict(facts), len(changelog), changelog)
    assert check.equal and check.caught_up
    assert (check.facts_true, check.facts_false) == (check.kb_true, check.kb_false)
    assert check.facts_true == sum(f.truth for f in facts.values())
    figures = check.to_json()
    assert figures["equal"] and figures["facts"] == len(facts)
    assert figures["edits_expected"] == figures["edits_in_changelog"] == 40
    assert "equals the knowledge base" in "\n".join(mirror_lines(check))


def test_missing_extra_and_differing_facts_are_named() -> None:
    batches, changelog = _stream()
    facts = fold(batches)[NS]
    ids = sorted(facts)
    mirrored = dict(facts)
    del mirrored[ids[0]]
    mirrored["stranger"] = facts[ids[1]].model_copy(update={"fact_id": "stranger"})
    flipped = next(i for i in ids[2:] if facts[i].truth)
    mirrored[flipped] = facts[flipped].model_copy(update={"truth": False})
    retold = next(i for i in ids[2:] if i != flipped)
    mirrored[retold] = facts[retold].model_copy(update={"text": "Something else."})
    check = compare(facts.values(), mirrored, 39, changelog)
    assert not check.equal and not check.caught_up
    assert check.missing == [ids[0]] and check.extra == ["stranger"]
    assert check.truth_differs == [flipped] and check.record_differs == [retold]
    said = "\n".join(mirror_lines(check))
    assert "did not catch up" in said and f"missing from the mirror: {ids[0]}" in said
    assert f"truth differs: {flipped}" in said


def test_a_republished_batch_is_not_expected_in_the_mirror() -> None:
    batches, changelog = _stream()
    again = _republished(batches[3])
    facts = fold([*batches, again])[NS]
    assert facts == fold(batches)[NS]  # the first batch wins in the knowledge base
    check = compare(facts.values(), dict(facts), 40, [*changelog, *again])
    assert check.caught_up and check.equal
    assert (check.edits_in_changelog, check.edits_expected) == (40 + len(again), 40)


def test_the_demo_table_shows_the_mirror_when_the_results_file_has_one() -> None:
    batches, changelog = _stream()
    facts = fold(batches)[NS]
    check = compare(facts.values(), dict(facts), 40, changelog)
    figures = {
        "model": "m",
        "documents": 3,
        "data": "d.jsonl",
        "seconds": 1.0,
        "timings": {},
        "facts": len(facts),
        "facts_true": check.kb_true,
        "edits_by_op": {},
        "story": {"grounding": None, "change": None},
        "audit": {"flagged_documents": 0, "documents_with_kept_facts": 0, "kept_facts": 0},
    }
    assert "PostgreSQL mirror" not in figures_markdown(figures)
    table = figures_markdown({**figures, "mirror": check.to_json()})
    assert f"| PostgreSQL mirror | {len(facts)} facts ({check.facts_true} true), equal to" in table


class _Store:
    """Stands in for ``MirrorStore`` at the start: opens (the lock taken) and closes."""

    opened: list[tuple[str, str]] = []

    @classmethod
    async def open(cls, dsn: str, topic: str) -> _Store:
        cls.opened.append((dsn, topic))
        return cls()

    async def close(self) -> None:
        pass


class _Runs:
    """Stands in for ``run_mirror``: a live (follow) run writes a round and waits to be
    cancelled; a catch-up run writes one more round and returns."""

    def __init__(self, fail_live: bool = False) -> None:
        self.calls: list[tuple[bool, list[str] | None]] = []
        self.cancelled = False
        self.fail_live = fail_live

    async def __call__(
        self,
        kafka: KafkaSettings,
        settings: MirrorSettings,
        dsn: str,
        namespaces: Sequence[str] | None = None,
        *,
        follow: bool = True,
        on_round: Callable[[RoundResult, int], None] | None = None,
    ) -> MirrorReport:
        self.calls.append((follow, None if namespaces is None else list(namespaces)))
        assert on_round is not None and dsn == "dbname=demo"
        if follow:
            on_round(RoundResult(5, 2, 0, 0, 0, {}), 3)
            if self.fail_live:
                raise RuntimeError("lost the database")
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled = True
                raise
        on_round(RoundResult(3, 1, 1, 0, 0, {}), 0)
        return MirrorReport()


async def test_the_live_mirror_is_stopped_then_caught_up(monkeypatch: pytest.MonkeyPatch) -> None:
    runs = _Runs()
    monkeypatch.setattr(demo_mirror, "run_mirror", runs)
    monkeypatch.setattr(demo_mirror, "MirrorStore", _Store)
    lags: list[int] = []
    mirror = DemoMirror(Settings(), NS, "dbname=demo", on_round=lambda _, lag: lags.append(lag))
    await mirror.start()
    assert _Store.opened[-1] == ("dbname=demo", mirror.topic)
    await asyncio.sleep(0.01)
    assert mirror.alive()
    report = await mirror.finish()
    assert runs.cancelled and not mirror.alive()
    assert runs.calls == [(True, [NS]), (False, [NS])]
    assert (report.rounds, report.edits, report.batches, report.duplicates) == (2, 8, 3, 1)
    assert lags == [3, 0]


async def test_a_live_mirror_s_failure_is_raised_by_finish(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runs = _Runs(fail_live=True)
    monkeypatch.setattr(demo_mirror, "run_mirror", runs)
    monkeypatch.setattr(demo_mirror, "MirrorStore", _Store)
    mirror = DemoMirror(Settings(), NS, "dbname=demo")
    await mirror.start()
    await asyncio.sleep(0.01)
    with pytest.raises(RuntimeError, match="lost the database"):
        await mirror.finish()
    assert runs.calls == [(True, [NS])]  # no catch-up on a mirror that failed
    await mirror.stop()  # and stopping it after is quiet
