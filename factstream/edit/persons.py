"""Conversations' persons and turns: facts must name people, and say where they were said.

A conversation's turns speak in the first and second person ("I moved to Lisbon"); the
extraction resolves them to the speakers (docs/design.md section 2). A fact still saying
"I", "my", "we" or "you" is refused (``unresolved_person``): stored, it would say nothing
about anyone.

A kept fact cites the turns it was said in (``cite_turns``), found without the LM, from
the fact's words as the document's real turns write them: the turn sharing most of its
words (a speaker it names winning a tie, then the earlier turn), and, for each name or
number of the fact (the words the grounding check checks) that turn lacks, the turn
writing it that shares most words. The speakers' own names count for nothing: facts name
the speakers where the turns say "I" and "you", and greetings name the one greeted. The
fact is said by the speaker of the first of those (``said_by``). A fact that shares no word
with any turn cites none. The LM is never asked for turn ids: what it writes is matched
against the document, so a made-up or misnumbered citation cannot reach the changelog,
and a replay cites the same turns.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from factstream.edit.grounding import Refusal, grounded_anchors
from factstream.topics.records import Turn

__all__ = ["PRONOUNS", "Citation", "cite_turns", "said_by", "unresolved_person"]

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


def _all_words(text: str) -> set[str]:
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return set(_WORD.findall(plain.casefold()))


def _fold(text: str) -> set[str]:
    return {w for w in _all_words(text) if len(w) > 2 and w not in _STOP}


@dataclass(frozen=True)
class Citation:
    """Where a conversation's fact was said.

    Attributes:
        positions: The cited turns' positions in the document (0-based), in the order said.
        speaker: Who said it: the speaker of the turn sharing most of its words.
    """

    positions: tuple[int, ...]
    speaker: str | None


def cite_turns(text: str, turns: Sequence[Turn]) -> Citation:
    """The turns of ``turns`` that fact ``text`` was said in (see the module docstring)."""
    speakers: set[str] = set().union(*(_all_words(turn.speaker) for turn in turns))
    words = _fold(text) - speakers
    anchors = [grounded_anchors(text, turn.text) - speakers for turn in turns]
    shared = [(words & _fold(turn.text)) | anchors[i] for i, turn in enumerate(turns)]
    best: tuple[int, int, int] | None = None
    first = None
    for position, turn in enumerate(turns):
        named = int(bool(_fold(turn.speaker) & _fold(text)))
        score = (len(shared[position]), named, -position)
        if shared[position] and (best is None or score > best):
            best, first = score, position
    if first is None:
        return Citation((), None)
    cited, covered = {first}, set(anchors[first])
    missing = set().union(*anchors) - covered
    while missing:
        # The turn writing most of the names and numbers still missing; then most shared.
        position = max(
            (p for p in range(len(turns)) if anchors[p] & missing),
            key=lambda p: (len(anchors[p] & missing), len(shared[p]), -p),
        )
        cited.add(position)
        missing -= anchors[position]
    return Citation(tuple(sorted(cited)), turns[first].speaker)


def said_by(text: str, turns: Sequence[Turn]) -> str | None:
    """The speaker of the turn ``text`` comes from; None when no turn shares a word with it."""
    return cite_turns(text, turns).speaker
