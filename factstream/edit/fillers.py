"""The filler cue: a sentence that gives a fact's subject another filler of its relation.

"Samir Sato: I've joined Kestrel Air." supersedes "Samir Sato employer Granite Capital.":
the sentence names the subject (the speaker, in the first person) and an entity that is
the object of an ``employer`` fact elsewhere among the candidates ("Zoe Brennan employer
Kestrel Air."). So a fact (subject, relation, object) is lifted (``filler_lift``) when one
sentence of the document names its subject and spells out, besides, another object of
that relation among the candidates: the document names a new value for that slot. Only
the sentence's own words count as the filler, not its speaker ("Olivia Nakamura: my
manager is Tara Nakamura." gives Olivia a manager, not Tara one). The statement lift
(``statements.py``) says which relation a sentence is about; this cue says which subject's
slot gets a new value, which the relation's cosine alone mistakes for another ("I
started a new job at X" lies near a job title as much as near an employer).

Only conversation lines count (``statements.statements``), as for the statement lift: an
article names a person's several posts held at once, and there the cue ranked a post the
sentence names above the one it ends ("Buckland was replaced as Lord Chancellor and ...
by Dominic Raab" lifted Raab's other post over "Dominic Raab position held Lord
Chancellor"; docs/evaluation.md).

The fillers come from the candidate pool (the store's first stage for the document), so
the cue needs no query of its own; a filler that no candidate holds (a city nobody lives
in yet) gives no cue.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache

from factstream.edit.statements import statements
from factstream.topics.records import Fact

__all__ = ["filled"]


@lru_cache(maxsize=4096)
def _spelt(words: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(words)}(?!\w)")


def filled(
    facts: Iterable[Fact],
    texts: Sequence[str],
    named: Callable[[str, str], bool],
    limit: int,
) -> set[str]:
    """The ids of ``facts`` whose subject a statement of ``texts`` (up to ``limit``,
    ``statements.statements``) names (``named(naming, subject)``) beside another object of
    their relation among ``facts``."""
    facts = [f for f in facts if f.subject and f.relation and f.object]
    objects: dict[str, set[str]] = defaultdict(set)
    for fact in facts:
        objects[fact.relation or ""].add(fact.object or "")
    said = statements(texts, limit)
    every = set().union(*objects.values())
    # Per sentence, the objects its own words spell out (its speaker is not one of them).
    spelt = [{o for o in every if _spelt(o).search(s.said)} for s in said]
    found = set()
    for fact in facts:
        others = objects[fact.relation or ""] - {fact.object, fact.subject}
        if any(
            spelt[i] & others and named(s.naming, fact.subject or "") for i, s in enumerate(said)
        ):
            found.add(fact.fact_id)
    return found
