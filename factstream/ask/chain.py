"""Chain retrieval: each hop looks facts up by entity, ranks them by relation, and leads on.

One hop is (entity, relation): the facts indexed under the entity (``store.entities``),
true at ``as_of`` and valid at the asked time, searched with "entity relation" (its
keyword side with the relation alone: the index holds them to the entity) and ranked
by their similarity, lifted when the entity is the fact's subject ("the R of E" reads E as
the subject) and by how much of the relation the fact's relation (or, without structure,
its text) says. The best fact's other end is the entity the next hop is anchored on. No
LM here: ``eval multihop`` scores it alone, and the query agent's multi-hop answering
(``ask.multihop``) runs it per hop (docs/design.md section 6; RAE, TEMPLE-MQA).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from factstream.embed.base import Embedder
from factstream.store.base import FactStore, SearchHit
from factstream.store.entities import entity_key, fact_entities, name_keys
from factstream.temporal.intervals import ValidInterval
from factstream.topics.records import Fact

__all__ = [
    "HOP_DEPTH",
    "HopFact",
    "HopWhere",
    "hop_facts",
    "other_end",
    "rank_hop",
    "relation_match",
]

HOP_DEPTH = 20  # candidates a hop ranks (the entity's facts: a handful, rarely more)
SUBJECT_LIFT = 0.2  # "the R of E": E is the subject of the fact that answers
RELATION_LIFT = 0.3  # times the share of the relation's words the fact's relation says
_WORD = re.compile(r"[A-Za-z0-9]+")
_STOP = frozenset(
    {
        "the",
        "a",
        "an",
        "of",
        "in",
        "at",
        "to",
        "for",
        "is",
        "was",
        "by",
        "from",
        "with",
        "and",
        "or",
        "its",
        "their",
        "his",
        "her",
    }
)


@dataclass(frozen=True)
class HopWhere:
    """Where every hop of a chain reads: one namespace, one snapshot, one valid time."""

    namespace: str
    as_of: datetime | None
    valid: ValidInterval | None


@dataclass(frozen=True)
class HopFact:
    """A fact ranked for a hop, its rank score, and the entity it leads to (None: none)."""

    hit: SearchHit
    score: float
    leads_to: str | None

    @property
    def fact(self) -> Fact:
        return self.hit.fact


def _stem(word: str) -> str:
    word = word.casefold()
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text) if w.casefold() not in _STOP]


def relation_match(relation: str, fact: Fact) -> float:
    """The share of the relation's words the fact's relation says (its text, unstructured).

    An acronym matches the initials of the fact's relation ("CEO": "chief executive officer").
    """
    wanted = _words(relation)
    if not wanted:
        return 0.0
    said = _words(fact.relation or fact.text)
    stems = {_stem(w) for w in said}
    initials = "".join(w[0] for w in said).casefold()
    found = sum(
        _stem(w) in stems or (w.isupper() and len(w) > 1 and w.casefold() in initials)
        for w in wanted
    )
    return found / len(wanted)


def other_end(fact: Fact, anchor: str) -> str | None:
    """The entity the fact leads to from ``anchor``: its object, or its subject when the
    anchor is the object; without structure, the first other name in its text."""
    keys = set(name_keys(anchor))
    entities = fact_entities(fact)
    if fact.subject and fact.object:
        if entity_key(fact.object) in keys and entity_key(fact.subject) not in keys:
            return fact.subject
        return fact.object
    others = [n for n in entities.names if not keys & set(name_keys(n))]
    return others[0] if others else None


def _is_subject(fact: Fact, anchor: str) -> bool:
    subject = fact_entities(fact).subject
    return subject is not None and entity_key(subject) in set(name_keys(anchor))


async def hop_facts(
    store: FactStore,
    embedder: Embedder,
    where: HopWhere,
    entity: str,
    relation: str,
    *,
    alpha: float,
    depth: int = HOP_DEPTH,
    by_entity: bool = True,
) -> list[HopFact]:
    """The facts about ``entity`` ranked for ``relation``, best first (at most ``depth``).

    Looked up by the entity's own key; when nothing is indexed under it, by its aliases
    (a surname, an acronym). ``by_entity`` False searches every fact (no entity index:
    what the evaluation compares against).
    """
    query = f"{entity} {relation}"
    vector = await embedder.embed(query)
    keys = name_keys(entity)
    hits: list[SearchHit] = []
    lookups: tuple[Sequence[str] | None, ...] = (keys[:1], keys[1:]) if by_entity else (None,)
    for chosen in lookups:
        if chosen is not None and not chosen:
            continue
        hits = await store.search(
            where.namespace,
            _keywords(entity, relation, by_entity=chosen is not None),
            vector,
            as_of=where.as_of,
            top_k=depth,
            min_similarity=-1.0,
            alpha=alpha,
            valid=where.valid,
            entities=chosen,
        )
        if hits:
            break
    return rank_hop(hits, entity, relation)


def _keywords(entity: str, relation: str, *, by_entity: bool) -> str:
    """The keyword side of a hop's search: the relation alone when the entity index
    already holds the candidates to the entity's facts, else "entity relation".

    Under the index every candidate names the entity, so its words score every candidate
    alike (BM25 ``b`` 0: exactly alike) and say nothing; worse, the hybrid fusion then
    gives every candidate the keyword side found and the vector side did not the same
    score, a tie the search must read to its end (ties are cut by fact id): issue 37, a
    second read of four times the candidates in 8% of the benchmark's hop searches.
    """
    if by_entity and _WORD.search(relation):
        return relation
    return f"{entity} {relation}"


def rank_hop(hits: Sequence[SearchHit], entity: str, relation: str) -> list[HopFact]:
    """``hits`` ranked for the hop (entity, relation); ties go to the newer fact."""
    ranked = [
        HopFact(
            hit,
            hit.similarity
            + SUBJECT_LIFT * _is_subject(hit.fact, entity)
            + RELATION_LIFT * relation_match(relation, hit.fact),
            other_end(hit.fact, entity),
        )
        for hit in hits
    ]
    ranked.sort(key=lambda h: (-h.score, -h.fact.last_changed.timestamp()))
    return ranked
