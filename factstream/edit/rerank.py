"""The editor's rerank past the scores (``retrieval.ranked_candidates``): which facts drop
for a newer one of their subject and relation, the subject cap, and the restated facts'
place in the editor's view."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

from factstream.store.base import SearchHit
from factstream.topics.records import Fact

__all__ = ["Candidate", "capped", "older_facts", "view_resorted"]


@dataclass(frozen=True)
class Candidate:
    """A ranked fact and whether it clears the floor (what the editor may see)."""

    hit: SearchHit
    passes: bool


def older_facts(facts: Iterable[Fact]) -> set[str]:
    """The ids of ``facts`` with a newer fact of the same subject and relation among them."""
    facts = list(facts)
    newest: dict[tuple[str, str], datetime] = {}
    for fact in facts:
        if fact.subject and fact.relation:
            key = (fact.subject, fact.relation)
            newest[key] = max(newest.get(key, fact.first_seen), fact.first_seen)
    return {
        fact.fact_id
        for fact in facts
        if fact.subject
        and fact.relation
        and fact.first_seen < newest[(fact.subject, fact.relation)]
    }


def capped(ranked: list[Candidate], cap: int) -> list[Candidate]:
    """``ranked`` with each subject's facts past its ``cap`` first moved after the rest."""
    seen: dict[str, int] = {}
    within: list[Candidate] = []
    past: list[Candidate] = []
    for candidate in ranked:
        subject = candidate.hit.fact.subject
        if subject:
            seen[subject] = seen.get(subject, 0) + 1
        (past if subject and seen[subject] > cap else within).append(candidate)
    return within + past


def view_resorted(
    ranked: list[Candidate], top_k: int, drop: Callable[[Fact], float]
) -> list[Candidate]:
    """``ranked`` with the editor's view (its first ``top_k`` that pass) sorted again with
    ``drop(fact)`` off each score; the view holds the same facts, in its places, and each
    keeps its score (what ``retrieval.could_change`` compares)."""
    places = [i for i, c in enumerate(ranked) if c.passes][:top_k]
    view = [ranked[i] for i in places]
    order = sorted(
        range(len(view)), key=lambda i: (-(view[i].hit.score - drop(view[i].hit.fact)), i)
    )
    out = list(ranked)
    for place, i in zip(places, order, strict=True):
        out[place] = view[i]
    return out
