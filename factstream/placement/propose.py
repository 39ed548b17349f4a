"""``factstream placement plan`` behind the command: read the volume and the current
placement, decide which namespaces must stay where they are, plan the rest."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import orjson

from factstream.config import KafkaSettings, WorkerSettings
from factstream.placement.observe import Observed, from_changelog, from_documents, unread_partitions
from factstream.placement.planner import Plan, plan
from factstream.streams.admin import topic_partitions
from factstream.streams.placement import Placement, PlacementError
from factstream.topics.definitions import TopicName, topic_name

__all__ = ["Proposal", "Source", "expected_volume", "propose", "topic_count"]

Source = Literal["documents", "changelog", "none"]


@dataclass(frozen=True)
class Proposal:
    """The plan, and how many namespaces it held back for their unread documents."""

    plan: Plan
    held: int


async def topic_count(kafka: KafkaSettings, worker: WorkerSettings) -> int:
    """The documents topic's partition count; the one the worker creates it with if absent."""
    topic = topic_name(TopicName.DOCUMENTS, kafka.topic_prefix)
    return len(await topic_partitions(kafka, topic, wait_s=1.0)) or worker.partitions


def expected_volume(path: Path) -> dict[str, int]:
    """A volume file: JSON ``{"namespace": documents}``."""
    raw = orjson.loads(path.read_bytes())
    if not isinstance(raw, dict) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in raw.values()
    ):
        raise PlacementError(f"volume file {path}: not a JSON object of namespace -> count")
    return {str(k): int(v) for k, v in raw.items()}


def current(kafka: KafkaSettings) -> Placement:
    """The map publishers use now: the configured file, empty if none is written yet."""
    path = kafka.placement_file
    return Placement.load(path) if path is not None and path.exists() else Placement()


async def propose(
    kafka: KafkaSettings,
    worker: WorkerSettings,
    *,
    source: Source,
    volume_file: Path | None = None,
    partitions: int | None = None,
    move: bool = False,
) -> Proposal:
    """A plan for the documents topic (``partitions``, default its own count).

    Without ``move`` every namespace already placed (mapped now, or seen on the topic)
    keeps its partition. With ``move`` only those whose partitions the worker group has not
    read to the end keep it.
    """
    count = partitions or await topic_count(kafka, worker)
    now = current(kafka)
    if now.namespaces and now.partitions != count and not move:
        raise PlacementError(
            f"the current map is for {now.partitions} partitions, the topic has {count}: "
            "plan with --move once its documents are read"
        )
    observed = Observed()
    if source == "documents":
        observed = await from_documents(kafka)
    elif source == "changelog":
        observed = await from_changelog(kafka)
    volume: Counter[str] = Counter(observed.volume)
    if volume_file is not None:
        for namespace, expected in expected_volume(volume_file).items():
            volume[namespace] = expected
    where = {**observed.seen_at, **(now.namespaces if now.partitions == count else {})}
    held = 0
    if move:
        unread = await unread_partitions(kafka, worker.app_id)
        kept = {n: p for n, p in where.items() if observed.partitions.get(n, {p}) & unread.keys()}
        held = len(kept)
    else:
        kept = where
    before = now if now.partitions == count else Placement()
    return Proposal(plan(volume, count, kept, now=before), held)
