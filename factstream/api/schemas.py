"""Request and response bodies of the HTTP API (validated; unknown fields are refused)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints

from factstream.knowledge.query import AskResult, UsedFact, fact_as_of
from factstream.topics.records import NAMESPACE_PATTERN, Document, Fact, HistoryEntry

__all__ = [
    "AskBody",
    "AskResponse",
    "DocumentsBody",
    "FactOut",
    "FactsPage",
    "Namespace",
    "PublishResponse",
    "ReadyResponse",
]

Namespace = Annotated[str, StringConstraints(pattern=NAMESPACE_PATTERN)]
_MAX_DOCUMENTS = 1000


class _Body(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AskBody(_Body):
    """A question about one namespace; ``choices`` makes it multiple choice."""

    question: str = Field(min_length=1, description="The question (length limited by settings).")
    namespace: Namespace
    as_of: AwareDatetime | None = Field(
        None, description="Answer from the facts true at this time (RFC 3339 with a zone)."
    )
    top_k: int | None = Field(None, description="Facts to retrieve (1 to the configured max).")
    choices: list[str] | None = Field(
        None, description="Possible answers; the answer is one of them, verbatim."
    )
    stream: bool = Field(
        False, description="Reply with server-sent events: facts, then answer, then done."
    )


class FactOut(_Body):
    """A fact as of the time asked about: truth then and history up to then."""

    fact_id: str
    namespace: str
    text: str
    truth: bool
    history: list[HistoryEntry]
    score: float | None = Field(None, description="Cosine similarity to the query, if searched.")
    replaces: str | None = None
    replaced_by: str | None = None
    first_seen: datetime
    last_changed: datetime

    @classmethod
    def of(cls, fact: Fact, as_of: datetime | None, score: float | None = None) -> FactOut:
        truth, history = fact_as_of(fact, as_of)
        return cls._build(fact, truth, history, score)

    @classmethod
    def used(cls, used: UsedFact) -> FactOut:
        return cls._build(used.fact, used.truth, used.history, used.score)

    @classmethod
    def _build(
        cls, fact: Fact, truth: bool, history: list[HistoryEntry], score: float | None
    ) -> FactOut:
        return cls(
            fact_id=fact.fact_id,
            namespace=fact.namespace,
            text=fact.text,
            truth=truth,
            history=history,
            score=score,
            replaces=fact.replaces,
            replaced_by=fact.replaced_by,
            first_seen=fact.first_seen,
            last_changed=fact.last_changed,
        )


class AskResponse(_Body):
    """The answer, the facts in its prompt, the model and seconds per stage."""

    answer: str
    reasoning: str
    facts: list[FactOut]
    model: str
    prompt: str
    namespace: str
    as_of: datetime | None
    timings: dict[str, float]

    @classmethod
    def of(cls, result: AskResult, namespace: str, as_of: datetime | None) -> AskResponse:
        return cls(
            answer=result.answer,
            reasoning=result.reasoning,
            facts=[FactOut.used(f) for f in result.facts],
            model=result.model,
            prompt=result.prompt,
            namespace=namespace,
            as_of=as_of,
            timings=result.timings,
        )


class FactsPage(_Body):
    """A page of facts; pass ``cursor`` back for the next one (None: the last page)."""

    facts: list[FactOut]
    cursor: str | None


class DocumentsBody(_Body):
    """Documents to publish on factstream.documents, in order."""

    documents: list[Document] = Field(min_length=1, max_length=_MAX_DOCUMENTS)


class PublishResponse(_Body):
    """What was published."""

    published: int
    ids: list[str]


class ReadyResponse(_Body):
    """Each dependency: "ok" or why it is not."""

    ready: bool
    checks: dict[str, str]
