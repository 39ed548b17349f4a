"""Prefer the facts whose subject is the one the question names, when its name is common.

A name that more than half of a namespace's facts contain is left out of a question's search
(``ask.common_words``): it picks out no fact by its words. Yet the question is still about
that one entity: in a conversation's turns, 95 to 98% of the evidence for a question that
names one of the two speakers is said by that speaker (LoCoMo, docs/evaluation.md). With
``FACTSTREAM_API_SUBJECT_BONUS`` above 0, the search asks for ``FETCH`` times the facts, adds
the bonus to the fused score of each whose subject (``store.entities.fact_entities``: its
structured subject, else the name its text opens with) is one of those names, and keeps
the best ``top_k``. The store's fused score lies in [0, 1], so the bonus is a share of it.
"""

from __future__ import annotations

from collections.abc import Sequence

from factstream.store.base import SearchHit
from factstream.store.entities import entity_key, fact_entities

__all__ = ["FETCH", "favour_subjects"]

FETCH = 3  # candidates asked for per fact kept, so that a favoured one below the cut is seen


def favour_subjects(
    hits: Sequence[SearchHit], names: Sequence[str], bonus: float, top_k: int
) -> list[SearchHit]:
    """The best ``top_k`` of ``hits`` once each whose subject is one of ``names`` has
    ``bonus`` added to its score; equal scores keep the store's order."""
    wanted = {entity_key(n) for n in names} - {""}
    if not wanted or bonus <= 0:
        return list(hits[:top_k])

    def score(hit: SearchHit) -> float:
        subject = fact_entities(hit.fact).subject
        favoured = subject is not None and entity_key(subject) in wanted
        return hit.score + (bonus if favoured else 0.0)

    ranked = sorted(enumerate(hits), key=lambda pair: (-score(pair[1]), pair[0]))
    return [hit for _, hit in ranked[:top_k]]
