"""Every topic factstream uses: name, key, value record, partitions, cleanup and retention."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from factstream.topics.records import (
    Answer,
    DeadLetter,
    Document,
    Fact,
    FactEdit,
    FeedEntryState,
    Question,
    Record,
)

__all__ = ["TOPICS", "TopicName", "TopicSpec", "topic_name"]

_DAY_MS = 24 * 60 * 60 * 1000


class TopicName(StrEnum):
    """Topic names before the configurable prefix."""

    DOCUMENTS = "factstream.documents"
    FACT_EDITS = "factstream.fact-edits"
    FACTS = "factstream.facts"
    QUESTIONS = "factstream.questions"
    ANSWERS = "factstream.answers"
    DOCUMENTS_DLQ = "factstream.documents.dlq"
    REVIEW = "factstream.documents.review"
    FEED_STATE = "factstream.feed-state"


@dataclass(frozen=True)
class TopicSpec:
    """One topic: what its keys and values are, and how Kafka keeps it."""

    name: TopicName
    key: str
    value: type[Record]
    compacted: bool = False
    retention_ms: int = 7 * _DAY_MS  # -1 keeps records forever

    def configs(self) -> dict[str, str]:
        """Kafka topic configs for creating it."""
        if self.compacted:
            return {"cleanup.policy": "compact"}
        return {"cleanup.policy": "delete", "retention.ms": str(self.retention_ms)}


TOPICS: dict[TopicName, TopicSpec] = {
    spec.name: spec
    for spec in (
        TopicSpec(TopicName.DOCUMENTS, "namespace", Document),
        # The changelog is the source of truth: Weaviate is rebuilt from it, so keep it.
        TopicSpec(TopicName.FACT_EDITS, "fact_id", FactEdit, retention_ms=-1),
        TopicSpec(TopicName.FACTS, "fact_id", Fact, compacted=True),
        TopicSpec(TopicName.QUESTIONS, "namespace", Question, retention_ms=_DAY_MS),
        TopicSpec(TopicName.ANSWERS, "question id", Answer, retention_ms=_DAY_MS),
        TopicSpec(TopicName.DOCUMENTS_DLQ, "original key", DeadLetter, retention_ms=30 * _DAY_MS),
        # Documents whose edits exceed the blast radius wait here for a person.
        TopicSpec(TopicName.REVIEW, "namespace", Document, retention_ms=30 * _DAY_MS),
        # What the feed poller published: read back on start so no entry goes out twice.
        TopicSpec(TopicName.FEED_STATE, "namespace/feed entry id", FeedEntryState, compacted=True),
    )
}


def topic_name(name: TopicName, prefix: str) -> str:
    """The topic's name on the cluster: the configured prefix, then the contract name."""
    return f"{prefix}{name.value}"
