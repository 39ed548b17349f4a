"""Questions over a world, read off its triples: single-hop, 2-hop and 3-hop.

A question follows a path of relations from a subject ("Where does Ana Silva's manager
live?": manager, then residence). Its answer at an event time is the path followed through
the triples valid then; it becomes known when the conversations telling that event are
over (the last chunk's time), as CLARK-News' ``known_from`` is when the documents read so
far support it. Only questions whose answer changes are kept (CLARK-News drops the others);
the choices are every answer a question ever has. Each answer carries its gold
decomposition (``chain``): the triple of each hop at the time it became the answer, with
the chunk stating it, for the multi-hop evaluation (``eval multihop``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from factstream_lab.world.model import (
    CHIEF_EXECUTIVE,
    CITY,
    EMPLOYER,
    JOB_TITLE,
    MANAGER,
    RESIDENCE,
    SPOUSE,
    Cast,
    State,
)

if TYPE_CHECKING:
    from factstream_lab.world.talk import Conversation

__all__ = [
    "PATHS",
    "Timeline",
    "WorldTriple",
    "follow",
    "follow_chain",
    "question_text",
    "questions_for",
]


def _stamp(when: datetime | None) -> str | None:
    return None if when is None else when.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class WorldTriple:
    """One relation's value over ``[valid_from, valid_to)``, and the chunk that states it."""

    subject: str
    relation: str
    object: str
    valid_from: datetime
    valid_to: datetime | None
    document_id: str

    def holds_at(self, when: datetime) -> bool:
        return self.valid_from <= when and (self.valid_to is None or when < self.valid_to)

    def to_json(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "relation": self.relation,
            "object": self.object,
            "valid_from": _stamp(self.valid_from),
            "valid_to": _stamp(self.valid_to),
            "document_id": self.document_id,
        }


@dataclass(frozen=True)
class Timeline:
    """The event times, and when each event is told in full (its last chunk's time)."""

    events: tuple[datetime, ...]
    told: Mapping[datetime, datetime]

    @classmethod
    def of(
        cls, states: Sequence[tuple[datetime, State]], conversations: Sequence[Conversation]
    ) -> Timeline:
        told: dict[datetime, datetime] = {}
        for c in conversations:
            last = c.chunks[-1].timestamp
            told[c.event] = max(told.get(c.event, last), last)
        return cls(tuple(when for when, _ in states), told)


# Paths from a person (the subject of every path but those from an organisation).
PATHS: tuple[tuple[str, ...], ...] = (
    (EMPLOYER,),
    (JOB_TITLE,),
    (RESIDENCE,),
    (SPOUSE,),
    (MANAGER,),
    (MANAGER, RESIDENCE),
    (EMPLOYER, CITY),
    (EMPLOYER, CHIEF_EXECUTIVE),
    (SPOUSE, EMPLOYER),
    (SPOUSE, RESIDENCE),
    (EMPLOYER, CHIEF_EXECUTIVE, RESIDENCE),
    (SPOUSE, EMPLOYER, CITY),
    (MANAGER, SPOUSE, RESIDENCE),
)
ORG_PATHS: tuple[tuple[str, ...], ...] = (
    (CITY,),
    (CHIEF_EXECUTIVE,),
    (CHIEF_EXECUTIVE, RESIDENCE),
)

_NOUN = {
    EMPLOYER: "{x}'s employer",
    MANAGER: "{x}'s manager",
    SPOUSE: "{x}'s spouse",
    CHIEF_EXECUTIVE: "the chief executive of {x}",
}
_ASK = {
    EMPLOYER: "Who employs {x}?",
    JOB_TITLE: "What is {x}'s job title?",
    RESIDENCE: "Where does {x} live?",
    SPOUSE: "Who is {x} married to?",
    MANAGER: "Who is {x}'s manager?",
    CITY: "Where is {x} headquartered?",
    CHIEF_EXECUTIVE: "Who is the chief executive of {x}?",
}


def question_text(subject: str, path: Sequence[str]) -> str:
    """The question that follows ``path`` from ``subject``."""
    phrase = subject
    for relation in path[:-1]:
        phrase = _NOUN[relation].format(x=phrase)
    text = _ASK[path[-1]].format(x=phrase)
    return text[0].upper() + text[1:]


def follow_chain(
    index: Mapping[tuple[str, str], Sequence[WorldTriple]],
    subject: str,
    path: Sequence[str],
    when: datetime,
) -> list[WorldTriple] | None:
    """The triple of each hop of the path at ``when``, valid then (None: a hop is missing)."""
    chain: list[WorldTriple] = []
    node = subject
    for relation in path:
        found = [t for t in index.get((node, relation), ()) if t.holds_at(when)]
        if not found:
            return None
        chain.append(found[0])
        node = found[0].object
    return chain


def follow(
    index: Mapping[tuple[str, str], Sequence[WorldTriple]],
    subject: str,
    path: Sequence[str],
    when: datetime,
) -> str | None:
    """The path's end at ``when`` through the triples valid then (None: a hop is missing)."""
    chain = follow_chain(index, subject, path, when)
    return chain[-1].object if chain else None


def _hop(triple: WorldTriple) -> dict[str, str]:
    """One hop of a gold decomposition: the triple followed and the chunk stating it."""
    return {
        "subject": triple.subject,
        "relation": triple.relation,
        "object": triple.object,
        "document_id": triple.document_id,
    }


def _answers(
    chains: Sequence[list[WorldTriple] | None], timeline: Timeline
) -> list[dict[str, Any]]:
    """The answers over time; each with its gold decomposition when it became the answer."""
    answers: list[dict[str, Any]] = []
    previous: str | None = None
    for when, chain in zip(timeline.events, chains, strict=True):
        value = chain[-1].object if chain else None
        if value == previous:
            continue
        told = _stamp(timeline.told[when])
        if answers and answers[-1]["known_until"] is None:
            answers[-1]["known_until"] = told
        if chain is not None:
            hops = [_hop(t) for t in chain]
            answers.append(
                {"answer": value, "known_from": told, "known_until": None, "chain": hops}
            )
        previous = value
    return answers


def questions_for(
    triples: Sequence[WorldTriple], timeline: Timeline, cast: Cast
) -> list[dict[str, Any]]:
    """Every question whose answer changes over the timeline, in a fixed order."""
    index: dict[tuple[str, str], list[WorldTriple]] = defaultdict(list)
    for triple in triples:
        index[(triple.subject, triple.relation)].append(triple)
    asked = [(p, path) for p in cast.people for path in PATHS]
    asked += [(o, path) for o in cast.orgs for path in ORG_PATHS]
    questions = []
    for subject, path in asked:
        chains = [follow_chain(index, subject, path, when) for when in timeline.events]
        answers = _answers(chains, timeline)
        choices = sorted({a["answer"] for a in answers})
        if len(choices) < 2:
            continue
        questions.append(
            {
                "question": question_text(subject, path),
                "subject": subject,
                "relation": " / ".join(path),
                "hops": len(path),
                "choices": choices,
                "answers": answers,
            }
        )
    return questions
