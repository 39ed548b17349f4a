"""What the query agent takes and gives: a request, the facts it used, the hops, the result.

The request and result types of ``ask.query`` (which re-exports them): a question
(``AskRequest``), a fact as shown to the LM at ``as_of`` (``UsedFact``), one hop of a
multi-hop answer (``UsedHop``), what an answer is drawn from (``Gathered``) and the answer
(``AskResult``), each with the record it becomes on the wire.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from factstream.ask.multihop import HopResult
from factstream.ask.valid_time import ValidTime
from factstream.prompts.answer import FactWithHistory
from factstream.prompts.answer import HistoryEntry as PromptHistory
from factstream.store.base import SearchHit
from factstream.store.rules import valid_interval
from factstream.temporal.intervals import ValidInterval, at
from factstream.topics.records import (
    Answer,
    AnswerFact,
    AnswerHop,
    AskMode,
    Fact,
    HistoryEntry,
    Question,
)

__all__ = [
    "AskRequest",
    "AskResult",
    "Gathered",
    "Retrieval",
    "UsedFact",
    "UsedHop",
    "fact_as_of",
    "prompt_facts",
    "used_fact",
]


@dataclass(frozen=True)
class AskRequest:
    """A question about one namespace, as of a time (None: now).

    ``valid`` is the valid time asked about (``at(t)`` for valid_at, an interval for
    valid_between); None lets the question's own time expression, or now, decide.
    """

    question: str
    namespace: str
    as_of: datetime | None = None
    top_k: int | None = None
    choices: Sequence[str] | None = None
    valid: ValidInterval | None = None
    mode: AskMode | None = None  # None: the configured mode

    @classmethod
    def from_question(cls, question: Question) -> AskRequest:
        """The request a Kafka question record makes."""
        valid = at(question.valid_at) if question.valid_at is not None else None
        if question.valid_between is not None:
            valid = ValidInterval(question.valid_between.start, question.valid_between.end)
        return cls(
            question.question,
            question.namespace,
            question.as_of,
            question.top_k,
            question.choices,
            valid,
            question.mode,
        )


@dataclass(frozen=True)
class UsedFact:
    """A fact as given to the LM: its state at ``as_of`` and its cosine similarity.

    ``valid`` is when it held in the world as known at ``as_of`` (``store.rules.valid_interval``:
    an end set by a world change after ``as_of`` reads open).
    """

    fact: Fact
    truth: bool
    history: list[HistoryEntry]
    score: float
    valid: ValidInterval

    def to_record(self) -> AnswerFact:
        return AnswerFact(
            fact_id=self.fact.fact_id,
            text=self.fact.text,
            truth=self.truth,
            history=self.history,
            score=self.score,
            valid_from=self.valid.start,
            valid_to=self.valid.end,
            turn_ids=self.fact.turn_ids,
        )


@dataclass(frozen=True)
class UsedHop:
    """One hop of a multi-hop answer, its facts as of the question (``multihop.HopResult``)."""

    question: str
    entity: str
    relation: str
    facts: list[UsedFact]
    answer: str | None
    seconds: float
    pruned: int

    @classmethod
    def of(cls, hop: HopResult, as_of: datetime | None) -> UsedHop:
        facts = [used_fact(h.hit, as_of) for h in hop.facts]
        return cls(
            hop.question, hop.entity, hop.relation, facts, hop.answer, hop.seconds, hop.pruned
        )

    def to_record(self) -> AnswerHop:
        return AnswerHop(
            question=self.question,
            entity=self.entity,
            relation=self.relation,
            facts=[f.to_record() for f in self.facts],
            answer=self.answer,
            seconds=self.seconds,
            pruned=self.pruned,
        )


@dataclass(frozen=True)
class Retrieval:
    """The facts retrieved for a question, best first, and the valid time they held in."""

    facts: list[UsedFact]
    valid_time: ValidTime


@dataclass(frozen=True)
class AskResult:
    """An answer, the facts in its prompt, who answered, and seconds per stage.

    ``valid_time`` is the valid-time filter the facts were retrieved with (None when the
    caller retrieved them itself and did not say).
    """

    answer: str
    reasoning: str
    facts: list[UsedFact]
    model: str
    prompt: str
    timings: dict[str, float] = field(default_factory=dict)
    valid_time: ValidTime | None = None
    mode: Literal["single", "multi_hop"] = "single"
    hops: list[UsedHop] = field(default_factory=list)
    rounds: int = 1
    confidence: float | None = None  # the self-check's verdict (None: not checked)

    def to_record(self, question_id: str, namespace: str) -> Answer:
        """The reply record on factstream.answers."""
        valid = self.valid_time
        return Answer(
            question_id=question_id,
            namespace=namespace,
            answer=self.answer,
            facts=[f.to_record() for f in self.facts],
            model=self.model,
            timings=self.timings,
            valid_time=valid.window() if valid is not None else None,
            time_expression=valid.expression if valid is not None else None,
            valid_time_source=valid.source if valid is not None else None,
            time_plan=valid.plan if valid is not None else None,
            mode=self.mode,
            hops=[h.to_record() for h in self.hops] or None,
            rounds=self.rounds,
            confidence=self.confidence,
        )


@dataclass(frozen=True)
class Gathered:
    """What an answer is drawn from: the facts, their valid time, the mode, the hops."""

    facts: list[UsedFact]
    valid_time: ValidTime
    mode: Literal["single", "multi_hop"] = "single"
    hops: list[UsedHop] = field(default_factory=list)


def fact_as_of(fact: Fact, as_of: datetime | None) -> tuple[bool, list[HistoryEntry]]:
    """The fact's truth and history as known at ``as_of`` (None: now, the whole history)."""
    if as_of is None:
        return fact.truth, list(fact.history)
    history = [h for h in fact.history if h.ts <= as_of]
    return (history[-1].truth if history else False), history


def prompt_facts(facts: Sequence[UsedFact]) -> list[FactWithHistory]:
    """The facts as the answer prompt shows them: text and history as of the question."""
    return [
        FactWithHistory(
            text=f.fact.text,
            history=tuple(PromptHistory(ts=h.ts, truth=h.truth) for h in f.history),
        )
        for f in facts
    ]


def used_fact(hit: SearchHit, as_of: datetime | None) -> UsedFact:
    """A search hit as the LM is shown it: its truth and history at ``as_of``."""
    truth, history = fact_as_of(hit.fact, as_of)
    return UsedFact(hit.fact, truth, history, hit.similarity, valid_interval(hit.fact, as_of))
