"""The demo's PostgreSQL mirror: run beside the worker, then checked against the knowledge base.

``DemoMirror`` runs ``factstream mirror postgres`` in-process (``mirror.runner.run_mirror``,
following the demo's namespace only) while the worker edits the documents in. Once the
worker is through, ``finish`` stops the live mirror and catches it up to the changelog's
committed end; ``check`` compares the mirrored ``facts`` table with the knowledge base
(Weaviate): counts of true and false facts, and fact by fact the ids, truth and whole
records. ``MirrorCheck.to_json`` goes into the demo's results file.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import psycopg

from factstream.config import Settings
from factstream.mirror.runner import MirrorReport, run_mirror
from factstream.mirror.store import MirrorStore, RoundResult
from factstream.streams.changelog import first_batches
from factstream.topics.definitions import TopicName, topic_name
from factstream.topics.records import Fact, FactEdit

__all__ = ["DemoMirror", "MirrorCheck", "compare", "mirror_lines"]

_SHOWN = 5  # fact ids listed per kind of difference


@dataclass(frozen=True)
class MirrorCheck:
    """The mirror of one namespace against its knowledge base, once the mirror caught up.

    Attributes:
        facts_true, facts_false: the mirror's ``facts`` table, by truth.
        kb_true, kb_false: the knowledge base, by truth.
        missing: fact ids in the knowledge base and not in the mirror.
        extra: fact ids in the mirror and not in the knowledge base.
        truth_differs: fact ids in both whose truth differs.
        record_differs: fact ids in both, same truth, whose records differ (text,
            history, valid interval ...).
        edits_mirrored: rows of the namespace in the mirror's ``edits`` table.
        edits_in_changelog: the namespace's edits on the changelog.
        edits_expected: those of the first whole batch per document (a batch published
            again for a document, as after a worker's crash between publish and commit,
            is passed over by the knowledge base and the mirror alike).
        report: what the demo's mirror wrote (batches, duplicates, dead letters).
    """

    facts_true: int
    facts_false: int
    kb_true: int
    kb_false: int
    missing: list[str]
    extra: list[str]
    truth_differs: list[str]
    record_differs: list[str]
    edits_mirrored: int
    edits_in_changelog: int
    edits_expected: int
    report: MirrorReport = field(default_factory=MirrorReport)

    @property
    def equal(self) -> bool:
        """The mirror holds exactly the knowledge base's facts, record for record."""
        return not (self.missing or self.extra or self.truth_differs or self.record_differs)

    @property
    def caught_up(self) -> bool:
        """The mirror's ``edits`` table holds the edits of every document's first batch."""
        return self.edits_mirrored == self.edits_expected

    def to_json(self) -> dict[str, Any]:
        return {
            "equal": self.equal,
            "caught_up": self.caught_up,
            "facts": self.facts_true + self.facts_false,
            "facts_true": self.facts_true,
            "facts_false": self.facts_false,
            "knowledge_base_true": self.kb_true,
            "knowledge_base_false": self.kb_false,
            "missing": self.missing,
            "extra": self.extra,
            "truth_differs": self.truth_differs,
            "record_differs": self.record_differs,
            "edits_mirrored": self.edits_mirrored,
            "edits_in_changelog": self.edits_in_changelog,
            "edits_expected": self.edits_expected,
            "run": asdict(self.report),
        }


def compare(
    knowledge_base: Iterable[Fact],
    mirrored: Mapping[str, Fact],
    edits_mirrored: int,
    changelog: Sequence[FactEdit],
    report: MirrorReport | None = None,
) -> MirrorCheck:
    """The mirror's facts (by id) against the knowledge base's; ``changelog`` the
    namespace's edits on the changelog."""
    kb = {fact.fact_id: fact for fact in knowledge_base}
    both = sorted(kb.keys() & mirrored.keys())
    truth = [i for i in both if kb[i].truth != mirrored[i].truth]
    record = [i for i in both if kb[i].truth == mirrored[i].truth and kb[i] != mirrored[i]]
    return MirrorCheck(
        facts_true=sum(f.truth for f in mirrored.values()),
        facts_false=sum(not f.truth for f in mirrored.values()),
        kb_true=sum(f.truth for f in kb.values()),
        kb_false=sum(not f.truth for f in kb.values()),
        missing=sorted(kb.keys() - mirrored.keys()),
        extra=sorted(mirrored.keys() - kb.keys()),
        truth_differs=truth,
        record_differs=record,
        edits_mirrored=edits_mirrored,
        edits_in_changelog=len(changelog),
        edits_expected=sum(len(batch) for batch in first_batches(changelog).values()),
        report=report or MirrorReport(),
    )


def mirror_lines(check: MirrorCheck) -> list[str]:
    """The check as plain lines for the terminal."""
    total = check.facts_true + check.facts_false
    lines = [
        f"PostgreSQL mirror: {total} facts ({check.facts_true} true, {check.facts_false} false); "
        f"knowledge base: {check.kb_true + check.kb_false} ({check.kb_true} true, "
        f"{check.kb_false} false); {check.edits_mirrored} edits mirrored of "
        f"{check.edits_expected} expected ({check.edits_in_changelog} on the changelog), "
        f"{check.report.duplicates} republished batches passed over, "
        f"{check.report.dead_letters} dead letters."
    ]
    if not check.caught_up:
        lines.append("  The mirror did not catch up with the changelog.")
    if check.equal:
        lines.append("  The mirror equals the knowledge base: same fact ids, truth and records.")
    for label, ids in (
        ("missing from the mirror", check.missing),
        ("only in the mirror", check.extra),
        ("truth differs", check.truth_differs),
        ("record differs", check.record_differs),
    ):
        if ids:
            more = f" (+{len(ids) - _SHOWN} more)" if len(ids) > _SHOWN else ""
            lines.append(f"  {label}: {', '.join(ids[:_SHOWN])}{more}")
    return lines


class DemoMirror:
    """The mirror of one namespace into ``dsn``, live beside the demo's worker."""

    def __init__(
        self,
        settings: Settings,
        namespace: str,
        dsn: str | None = None,
        on_round: Callable[[RoundResult, int], None] | None = None,
    ) -> None:
        self.settings, self.namespace = settings, namespace
        self.dsn = dsn or settings.postgres.dsn
        self.report = MirrorReport()
        self._on_round = on_round
        self._task: asyncio.Task[MirrorReport] | None = None

    def _round(self, result: RoundResult, lag: int) -> None:
        self.report.add(result)
        if self._on_round is not None:
            self._on_round(result, lag)

    async def _run(self, follow: bool) -> MirrorReport:
        return await run_mirror(
            self.settings.kafka,
            self.settings.mirror,
            self.dsn,
            [self.namespace],
            follow=follow,
            on_round=self._round,
        )

    @property
    def topic(self) -> str:
        return topic_name(TopicName.FACT_EDITS, self.settings.kafka.topic_prefix)

    async def start(self) -> None:
        """Start following the changelog (a task on the running event loop).

        Raises:
            FactstreamError: another mirror of the topic writes to the database.
            psycopg.Error: the database does not answer.
        """
        store = await MirrorStore.open(self.dsn, self.topic)  # fail now, not at the end
        await store.close()
        self._task = asyncio.create_task(self._run(follow=True))

    def alive(self) -> bool:
        return self._task is not None and not self._task.done()

    async def finish(self) -> MirrorReport:
        """Stop the live mirror and catch up to the changelog's committed end.

        A round cut off by the stop is rolled back whole (one transaction); the catch-up
        resumes from the offsets in the database. Raises what the live mirror raised.
        """
        if self._task is not None and self._task.done():
            self._task.result()  # its error, if it failed
        await self.stop()
        await self._run(follow=False)
        return self.report

    async def stop(self) -> None:
        """Stop the live mirror (a round cut off is rolled back whole); its error, if it
        failed, is ``finish``'s to raise, not this one's."""
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._task
        self._task = None

    async def check(
        self, knowledge_base: Iterable[Fact], changelog: Sequence[FactEdit]
    ) -> MirrorCheck:
        """The mirrored namespace against ``knowledge_base``; ``changelog``: its edits."""
        conn = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True)
        try:
            mirrored = await MirrorStore(conn, self.topic).facts(self.namespace)
            cur = await conn.execute(
                "SELECT count(*) FROM edits WHERE namespace = %s", (self.namespace,)
            )
            row = await cur.fetchone()
        finally:
            await conn.close()
        edits = int(row[0]) if row else 0
        return compare(knowledge_base, mirrored, edits, changelog, self.report)
