"""Conversations' persons: facts must name people, and say who said them.

A conversation's turns speak in the first and second person ("I moved to Lisbon"); the
extraction resolves them to the speakers (docs/design.md section 2). A fact still saying
"I", "my", "we" or "you" is refused (``unresolved_person``): stored, it would say nothing
about anyone. A kept fact is attributed to the speaker of the turn it comes from: the turn
sharing most of its words, a speaker it names winning a tie.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from factstream.edit.grounding import Refusal
from factstream.topics.records import Turn

__all__ = ["PRONOUNS", "said_by", "unresolved_person"]

# First and second person, folded; "us" and "i" only as written in lower case or as "I"
# (so that "US" stays a country).


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


PRONOUNS = _set("i me my mine myself we us our ours ourselves you your yours yourself yourselves")
_WORD = re.compile(r"[^\W\d_]+")
_STOP = _set(
    "the a an of in at to and or is are was were has have had now for with as on by from "
    "this that these those it its be been their his her them they he she"
)


def unresolved_person(text: str) -> Refusal | None:
    """A refusal when ``text`` speaks in the first or second person, else None."""
    for word in _WORD.findall(text):
        if word == "US":
            continue
        if word.casefold() in PRONOUNS:
            return Refusal("unresolved_person", word)
    return None


def _fold(text: str) -> set[str]:
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return {w for w in _WORD.findall(plain.casefold()) if len(w) > 2 and w not in _STOP}


def said_by(text: str, turns: Sequence[Turn]) -> str | None:
    """The speaker of the turn ``text`` comes from; None when no turn shares a word with it."""
    words = _fold(text)
    best: tuple[int, int, int] | None = None
    speaker = None
    for position, turn in enumerate(turns):
        shared = len(words & _fold(turn.text))
        named = int(bool(_fold(turn.speaker) & words))
        score = (shared, named, -position)
        if shared and (best is None or score > best):
            best, speaker = score, turn.speaker
    return speaker
