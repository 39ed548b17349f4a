"""Request and response bodies of the HTTP API (validated; unknown fields are refused)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, Self

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

from factstream.ask.query import AskRequest, AskResult, UsedFact, UsedHop, fact_as_of
from factstream.ask.valid_time import ValidTime, ValidTimeSource
from factstream.store.rules import valid_interval
from factstream.temporal.intervals import ValidInterval, at
from factstream.topics.records import (
    NAMESPACE_PATTERN,
    AskMode,
    Document,
    Fact,
    HistoryEntry,
    TimePlanNote,
    ValidWindow,
)

__all__ = [
    "AskBody",
    "AskResponse",
    "DocumentsBody",
    "FactOut",
    "FactsPage",
    "HopOut",
    "Namespace",
    "PublishResponse",
    "ReadyResponse",
    "ValidBetween",
    "ValidTimeOut",
]

Namespace = Annotated[str, StringConstraints(pattern=NAMESPACE_PATTERN)]
_MAX_DOCUMENTS = 1000


class _Body(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ValidBetween(ValidWindow):
    """A valid-time interval ``[start, end)``: facts that held at some instant of it."""

    start: AwareDatetime | None = Field(
        None, description="First instant (RFC 3339 with a zone); none: open, no start."
    )
    end: AwareDatetime | None = Field(
        None, description="End, exclusive, after start (RFC 3339 with a zone); none: open."
    )


class AskBody(_Body):
    """A question about one namespace; ``choices`` makes it multiple choice.

    Reads are bitemporal: ``as_of`` is what the knowledge base believed then (time of
    belief), ``valid_at``/``valid_between`` what held in the world then (valid time). With
    neither valid time, a time the question names ("in 2019", "last year", read against
    ``as_of`` or now) is used, else what still holds at ``as_of`` (or now).
    """

    question: str = Field(min_length=1, description="The question (length limited by settings).")
    namespace: Namespace
    as_of: AwareDatetime | None = Field(
        None, description="Answer from the facts true at this time (RFC 3339 with a zone)."
    )
    top_k: int | None = Field(None, description="Facts to retrieve (1 to the configured max).")
    choices: list[str] | None = Field(
        None, description="Possible answers; the answer is one of them, verbatim."
    )
    valid_at: AwareDatetime | None = Field(
        None,
        description="Only facts that held in the world at this instant (RFC 3339 with a "
        "zone); overrides a time the question names. Not with valid_between.",
    )
    valid_between: ValidBetween | None = Field(
        None,
        description="Only facts that held at some instant of [start, end); overrides a time "
        "the question names. Not with valid_at.",
    )
    stream: bool = Field(
        False,
        description="Reply with server-sent events: facts, a token per piece the LM writes, "
        "then answer, then done.",
    )
    mode: AskMode | None = Field(
        None,
        description="single: one retrieval, one LM call; multi_hop: the question planned into "
        "hops (rules for 'the R of the R of E', else the LM), each hop's facts looked up by "
        "the previous hop's entity, pruned to the chain; auto: multi_hop when the plan has "
        "two hops or more. Default: FACTSTREAM_API_MODE.",
    )

    @model_validator(mode="after")
    def _one_valid_time(self) -> Self:
        if self.valid_at is not None and self.valid_between is not None:
            raise ValueError("give valid_at or valid_between, not both")
        return self

    def valid(self) -> ValidInterval | None:
        """The valid time asked for, if any."""
        if self.valid_at is not None:
            return at(self.valid_at)
        if self.valid_between is not None:
            return ValidInterval(self.valid_between.start, self.valid_between.end)
        return None

    def to_request(self) -> AskRequest:
        """The query engine's request."""
        return AskRequest(
            self.question,
            self.namespace,
            self.as_of,
            self.top_k,
            self.choices,
            self.valid(),
            self.mode,
        )


class ValidTimeOut(_Body):
    """The valid time the facts were retrieved with: the interval, where it came from, why."""

    start: datetime | None = Field(description="First instant; null: open.")
    end: datetime | None = Field(description="End, exclusive; null: open.")
    source: ValidTimeSource = Field(
        description="request: valid_at/valid_between; question: a time the question names; "
        "plan: planned by the LM from an event the question names, anchored on that event's "
        "fact's stored interval; current: what still holds at as_of (or now); none: no "
        "valid-time filter."
    )
    expression: str | None = Field(
        None,
        description="The question's words the interval was read from (source question), or "
        "the event a plan anchored on (source plan).",
    )
    plan: TimePlanNote | None = Field(
        None,
        description="What the LM's time plan did, when one was made: its outcome, the event, "
        "the fact it anchored on, or why it was not used.",
    )
    description: str = Field(description='In words, e.g. "in 2019" = 2019-01-01 to 2020-01-01.')

    @classmethod
    def of(cls, valid: ValidTime) -> ValidTimeOut:
        interval = valid.interval
        return cls(
            start=interval.start if interval is not None else None,
            end=interval.end if interval is not None else None,
            source=valid.source,
            expression=valid.expression,
            plan=valid.plan,
            description=valid.describe(),
        )


class FactOut(_Body):
    """A fact as of the time asked about: truth then, history up to then, and when it held.

    ``[valid_from, valid_to)`` is its valid interval as known then: an end set by a world
    change after ``as_of`` reads open; a fact with no valid time reads valid from first_seen.
    """

    fact_id: str
    namespace: str
    text: str
    truth: bool
    history: list[HistoryEntry]
    score: float | None = Field(None, description="Cosine similarity to the query, if searched.")
    valid_from: datetime | None = Field(
        None, description="When it began to hold in the world; null: open (no known start)."
    )
    valid_to: datetime | None = Field(
        None,
        description="When it stopped holding, exclusive; null: still holds (as known at as_of).",
    )
    replaces: str | None = None
    replaced_by: str | None = None
    first_seen: datetime
    last_changed: datetime
    turn_ids: list[str] = Field(
        default_factory=list,
        description="The conversation turns it was said in (their ids, in the order said), "
        "in the document of its first history entry; empty: not from a conversation, or no "
        "turn found.",
    )

    @classmethod
    def of(cls, fact: Fact, as_of: datetime | None, score: float | None = None) -> FactOut:
        truth, history = fact_as_of(fact, as_of)
        return cls._build(fact, truth, history, valid_interval(fact, as_of), score)

    @classmethod
    def used(cls, used: UsedFact) -> FactOut:
        return cls._build(used.fact, used.truth, used.history, used.valid, used.score)

    @classmethod
    def _build(
        cls,
        fact: Fact,
        truth: bool,
        history: list[HistoryEntry],
        valid: ValidInterval,
        score: float | None,
    ) -> FactOut:
        return cls(
            fact_id=fact.fact_id,
            namespace=fact.namespace,
            text=fact.text,
            truth=truth,
            history=history,
            score=score,
            valid_from=valid.start,
            valid_to=valid.end,
            replaces=fact.replaces,
            replaced_by=fact.replaced_by,
            first_seen=fact.first_seen,
            last_changed=fact.last_changed,
            turn_ids=fact.turn_ids or [],
        )


class HopOut(_Body):
    """One hop of a multi-hop answer."""

    question: str = Field(description="The hop's sub-question.")
    entity: str = Field(description="The entity its facts were looked up by.")
    relation: str
    facts: list[FactOut] = Field(description="The facts kept for the hop (the chain's).")
    answer: str | None = Field(description="The entity the best fact leads to (next anchor).")
    seconds: float = Field(description="The hop's retrieval time.")
    pruned: int = Field(description="Facts ranked for the hop and left out of the chain.")

    @classmethod
    def of(cls, hop: UsedHop, namespace: str, as_of: datetime | None) -> HopOut:
        return cls(
            question=hop.question,
            entity=hop.entity,
            relation=hop.relation,
            facts=[FactOut.used(f) for f in hop.facts],
            answer=hop.answer,
            seconds=hop.seconds,
            pruned=hop.pruned,
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
    valid_time: ValidTimeOut | None = Field(
        None,
        description="The valid time the facts held in: from the request, the question, or now.",
    )
    timings: dict[str, float]
    mode: Literal["single", "multi_hop"] = Field(
        "single", description="How it was answered (auto says which it chose)."
    )
    hops: list[HopOut] = Field(
        default_factory=list, description="A multi-hop answer's chain, hop by hop."
    )
    rounds: int = Field(1, description="Retrieval rounds: 2 when the self-check sent it back.")
    confidence: float | None = Field(
        None, description="The self-check's verdict: 1 supported, 0 not; null: not checked."
    )

    @classmethod
    def of(cls, result: AskResult, namespace: str, as_of: datetime | None) -> AskResponse:
        valid = result.valid_time
        return cls(
            answer=result.answer,
            reasoning=result.reasoning,
            facts=[FactOut.used(f) for f in result.facts],
            model=result.model,
            prompt=result.prompt,
            namespace=namespace,
            as_of=as_of,
            valid_time=ValidTimeOut.of(valid) if valid is not None else None,
            timings=result.timings,
            mode=result.mode,
            hops=[HopOut.of(h, namespace, as_of) for h in result.hops],
            rounds=result.rounds,
            confidence=result.confidence,
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
