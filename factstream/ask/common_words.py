"""Leave out of a question's search the words that say little about which fact it wants.

A word that more than half of a namespace's facts contain picks out none of them: its
Robertson-Sparck Jones weight, log((N - n + 0.5) / (n + 0.5)), is below zero once n > N / 2
(the rule, not a tuned threshold). BM25's own weight stays positive and the embedding has no
weights at all, so such a word still pulls the search: in a conversation's turns the two
speakers' names ("What pets does Melanie have?" matches every "Melanie: ..." turn), in a
company's documents its own name. With ``FACTSTREAM_API_DROP_COMMON_WORDS`` the query agent
asks the store which of the question's words are that common (``WordCounting``) and searches
with the rest, on both sides of the hybrid search; a question all of whose words are common
is searched as asked.
"""

from __future__ import annotations

import re
from datetime import datetime

from factstream.store.base import FactStore, WordCounting

__all__ = [
    "common_names",
    "common_words_left_out",
    "leave_out",
    "search_words",
    "without_common_words",
]

_WORD = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z0-9]+)*")
_TOKEN = re.compile(r"[a-z0-9]+")  # how the keyword index splits a word (lower case)


def search_words(text: str) -> list[str]:
    """The distinct tokens of ``text`` as the keyword index splits them, lower case, in
    order ("Melanie's" is "melanie" and "s")."""
    return list(dict.fromkeys(_TOKEN.findall(text.lower())))


def leave_out(text: str, common: frozenset[str]) -> str:
    """``text`` without its words whose first token is in ``common`` ("Melanie's" goes with
    "melanie"); ``text`` itself when no other word would be left."""
    if not common:
        return text
    words = _WORD.findall(text)
    if all(_first(word) in common for word in words):
        return text
    return " ".join(_WORD.sub(lambda m: "" if _first(m[0]) in common else m[0], text).split())


def common_names(text: str, common: frozenset[str]) -> list[str]:
    """The capitalised words of ``text`` (names, as asked) whose first token is in
    ``common``, in order, each once ("Melanie's" gives "Melanie's")."""
    names = [w for w in _WORD.findall(text) if w[:1].isupper() and _first(w) in common]
    return list(dict.fromkeys(names))


def _first(word: str) -> str:
    tokens = _TOKEN.findall(word.lower())
    return tokens[0] if tokens else ""


async def without_common_words(
    store: FactStore, namespace: str, text: str, as_of: datetime | None
) -> str:
    """``text`` without the words more than half of the namespace's facts true at ``as_of``
    contain (one store request of two rounds); as it is on a store that cannot count."""
    return (await common_words_left_out(store, namespace, text, as_of))[0]


async def common_words_left_out(
    store: FactStore, namespace: str, text: str, as_of: datetime | None
) -> tuple[str, frozenset[str]]:
    """``without_common_words``, and the common words found (none on a store that cannot
    count)."""
    if not isinstance(store, WordCounting):
        return text, frozenset()
    words = search_words(text)
    common = await store.common_words(namespace, words, as_of=as_of)
    return leave_out(text, common), common
