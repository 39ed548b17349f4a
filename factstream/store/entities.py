"""The entity index of a namespace: which entities each fact is about, by normalised name.

Every stored fact carries the keys of the entities it names (docs/design.md section 6,
multi-hop answering): its structured subject and object where extraction gave them, else
the name its text opens with and the other capitalised names in it
(``text.names``); each name with the aliases the text may use for it (its head, a
person's surname, an acronym: ``names.aliases``). A key is the name folded: accents and
case dropped, punctuation and a leading "the" removed, spaces collapsed. So a hop looks a
namespace's facts up by entity (``FactStore.search(..., entities=keys)``), not only by
similarity. The keys are derived from the fact alone: the index lives in the stored facts
and is rebuilt from the changelog with them (``ops.rebuild``), one place, no second table
to keep in step.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from factstream.text.names import aliases, document_names, leading_name
from factstream.topics.records import Fact

__all__ = [
    "ENTITY_INDEX_VERSION",
    "FactEntities",
    "entity_key",
    "fact_entities",
    "fact_entity_keys",
    "is_about",
    "keys_of",
    "name_keys",
]

# Bumped when the keys a fact gets change: stored facts of an older version are re-keyed.
ENTITY_INDEX_VERSION = 1
_PUNCT = re.compile(r"[^\w\s&-]+")
_SPACE = re.compile(r"[\s_]+")
_POSSESSIVE = re.compile(r"['’]s\b")


def entity_key(name: str) -> str:
    """``name`` folded into the key it is indexed under ("" when nothing is left).

    >>> entity_key("  The Cobalt Robotics's ")
    'cobalt robotics'
    >>> entity_key("José  Álvarez")
    'jose alvarez'
    """
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    plain = _POSSESSIVE.sub("", plain.casefold())
    plain = _SPACE.sub(" ", _PUNCT.sub(" ", plain)).strip()
    return plain.removeprefix("the ").strip()


@lru_cache(maxsize=16_384)  # a pure function of names that recur across a hop's facts
def name_keys(name: str, *, short: bool = True) -> tuple[str, ...]:
    """The keys of ``name``: its own key first, then its aliases' (``short``: surnames too)."""
    own = entity_key(name)
    others = sorted({entity_key(a) for a in aliases(name.strip(), short=short)} - {own, ""})
    return (own, *others) if own else tuple(others)


@dataclass(frozen=True)
class FactEntities:
    """Who a fact is about: its subject and the other entities it names (names as written)."""

    subject: str | None
    objects: tuple[str, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return (*([self.subject] if self.subject else []), *self.objects)


def fact_entities(fact: Fact) -> FactEntities:
    """The fact's subject and objects: its structure, or else the names in its text."""
    if fact.subject and fact.object:
        return FactEntities(fact.subject, (fact.object,))
    return _text_entities(fact.text)


@lru_cache(maxsize=16_384)  # a hop ranks, checks and follows the same texts several times
def _text_entities(text: str) -> FactEntities:
    subject = leading_name(text)
    rest = [n for n in document_names(text) if subject is None or n != subject]
    return FactEntities(subject, tuple(rest))


def fact_entity_keys(fact: Fact) -> tuple[str, ...]:
    """Every key the fact is indexed under (its names' keys and their aliases'), sorted."""
    return tuple(sorted({k for name in fact_entities(fact).names for k in name_keys(name)}))


def is_about(fact: Fact, keys: Iterable[str]) -> bool:
    """Whether the fact is indexed under any of ``keys`` (the exact check after a filter)."""
    wanted = set(keys)
    return any(k in wanted for k in fact_entity_keys(fact))


def keys_of(names: Sequence[str]) -> list[str]:
    """The own keys of ``names``, in order, without repeats or empties."""
    return [k for k in dict.fromkeys(entity_key(n) for n in names) if k]
