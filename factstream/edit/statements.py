"""What a conversation says of someone: the statement lift, and names that name no one else.

A chunk that supersedes a fact says, about the fact's subject, something of the same kind:
"Dmitri Kowalski: I moved to Lisbon." ends "Dmitri Kowalski residence Lyon.". The chunk's
vector, or a sentence's, mostly says who is talked about (every fact of a person named in
a conversation is alike to it). So each sentence of a conversation line ("Speaker: ...")
that names a fact's subject (the speaker, when the sentence is in the first person) is
compared, by cosine, with the fact's relation alone ("residence"; the superseding chunk
names another object): a move lies near a residence, whatever the city. The best cosine,
times ``statement_lift``, is added to the fact's score (``retrieval.ranked_candidates``).
Only facts with a structured relation take part; the lift is at most ``statement_lift``,
and only for facts a statement names (what ``retrieval.could_change`` bounds it by).
Articles have no speaker lines: nothing changes for them.

``named_in``: a surname inside another speaker's full name names no one else ("Ines
Kowalski: ..." does not name Ben Kowalski); optionally, nor does a surname followed by
another name word ("Andrew Stephenson" does not name Stuart Andrew).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from factstream.embed.base import Embedder
from factstream.text.names import aliases, document_names, mentions
from factstream.topics.records import Fact

__all__ = [
    "Statement",
    "named_in",
    "predicate",
    "restated",
    "speakers",
    "statement_scores",
    "statements",
]

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
# A conversation line's speaker: a name, a colon, the turn ("Dmitri Kowalski: I moved").
_SPEAKER = re.compile(r"^([^:\n]{2,80}):\s+(.*)$")
_MIN_CHARS = 12  # shorter pieces ("Hi Ben!", "Wow.") state nothing
_PIECE = re.compile(r"(?<=[.!?;])\s+|\n+")  # a sentence, a clause after ";", a line
_WORD = re.compile(r"\w+")
_GLUE = {"of", "the", "and", "for", "to", "in", "a", "an", "de", "da", "van", "von", "der", "du"}
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|[Mm]e|[Mm]y|[Mm]ine|[Mm]yself)\b")


@dataclass(frozen=True)
class Statement:
    """A sentence of a document: the text that names who it is about, and what it says."""

    naming: str  # the sentence with its line's speaker, for ``names.mentions``
    said: str  # the sentence alone, what is embedded


def _speaker(line: str) -> tuple[str, str]:
    """A line's speaker prefix (when it is a name) and the rest."""
    match = _SPEAKER.match(line)
    if match and document_names(match.group(1)) == [match.group(1).strip()]:
        return match.group(1).strip(), match.group(2)
    return "", line


@lru_cache(maxsize=1024)
def speakers(text: str) -> frozenset[str]:
    """The names that open ``text``'s lines as speakers ("Dmitri Kowalski: ...")."""
    return frozenset(filter(None, (_speaker(line.strip())[0] for line in text.splitlines())))


def named_in(
    text: str,
    name: str | None,
    *,
    short: bool = True,
    voices: frozenset[str] | None = None,
    given: bool = False,
    full: bool = False,
) -> bool:
    """``names.mentions``, but a surname inside another speaker's full name names no one
    else: "Ines Kowalski: ..." does not name Ben Kowalski. ``voices``: the speakers (of
    ``text`` when None); so it depends on the document's text alone. ``given``: nor does
    a surname followed by another name word, a given name there ("Andrew Stephenson" does
    not name Stuart Andrew). ``full``: nor does a surname inside another full name that
    ``text`` spells out ("Ben Kowalski is my boss." does not name Ines Kowalski)."""
    voices = speakers(text) if voices is None else voices
    if full:
        voices = voices | {n for n in document_names(text) if " " in n}
    others = [s for s in voices if s != name and not (name and name in s)]
    if others and name:
        text = _masker(tuple(sorted(others, key=len, reverse=True))).sub(" ", text)
    if given and short and name:
        for alias in aliases(name):
            if " " not in alias and alias != name and alias[1:].islower():
                text = _given(alias).sub(" ", text)
    return mentions(text, name, short=short)


@lru_cache(maxsize=4096)
def _given(surname: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(surname)}(?=[ \t]+[A-Z][a-z])")


@lru_cache(maxsize=1024)
def _masker(names: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(rf"(?<!\w){re.escape(n)}(?!\w)" for n in names))


def statements(texts: Sequence[str], limit: int) -> list[Statement]:
    """Up to ``limit`` sentences of ``texts`` (a document's text, its title), in order.

    Only conversation lines ("Speaker: ..."): an article's sentences speak of a person's
    posts alike, and there the lift ranked one superseded fact lower (docs/evaluation.md).
    The speaker names who a sentence is about only when the sentence is in the first person
    ("I moved to Lisbon."), not in "Zoe Brennan moved to Rotterdam.".
    """
    found: list[Statement] = []
    for text in texts:
        for line in text.splitlines():
            speaker, rest = _speaker(line.strip())
            if not speaker:
                continue
            for sentence in _SENTENCE.split(rest):
                sentence = sentence.strip()
                if len(sentence) >= _MIN_CHARS:
                    who = speaker if _FIRST_PERSON.search(sentence) else ""
                    found.append(Statement(f"{who}\n{sentence}", sentence))
    return list(dict.fromkeys(found))[:limit]


def predicate(fact: Fact) -> str | None:
    """What a structured fact says of its subject, its relation ("residence"); None without
    one. The object is left out: the document that supersedes a fact names another one."""
    if not fact.subject or not fact.relation:
        return None
    return fact.relation


async def statement_scores(
    embedder: Embedder,
    said: Sequence[Statement],
    facts: Sequence[Fact],
    *,
    short: bool = True,
    text: str = "",
    given: bool = False,
    full: bool = False,
) -> dict[str, float]:
    """Per fact id: the best cosine of its predicate with a statement naming its subject.

    Facts without a predicate, or whose subject no statement names, are left out (no lift).
    ``text``: the document's text, whose speakers' names name only themselves (``named_in``).
    """
    voices = speakers(text)
    wanted: dict[str, tuple[str, list[int]]] = {}
    for fact in facts:
        what = predicate(fact)
        if what is None:
            continue
        naming = [
            i
            for i, s in enumerate(said)
            if named_in(s.naming, fact.subject, short=short, voices=voices, given=given, full=full)
        ]
        if naming:
            wanted[fact.fact_id] = (what, naming)
    if not wanted:
        return {}
    predicates = list(dict.fromkeys(what for what, _ in wanted.values()))
    used = sorted({i for _, naming in wanted.values() for i in naming})
    vectors = await embedder.embed_batch([said[i].said for i in used] + predicates)
    by_statement = dict(zip(used, vectors[: len(used)], strict=True))
    by_predicate = dict(zip(predicates, vectors[len(used) :], strict=True))
    return {
        fact_id: max(_cosine(by_statement[i], by_predicate[what]) for i in naming)
        for fact_id, (what, naming) in wanted.items()
    }


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def restated(fact: Fact, texts: Sequence[str], named: Callable[[str, str], bool]) -> bool:
    """Whether a sentence of ``texts`` (a document's text, its title) names ``fact``'s
    subject (``named(sentence, subject)``) and every word of its object, in any order
    ("New Jersey Senate President Nicholas Scutari" restates "Nicholas Scutari position
    held President of New Jersey Senate"): the document says the fact again, which a
    document superseding it would not (it names another object). A conversation line's
    speaker belongs to its sentences in the first person only, as in ``statements``."""
    if not fact.subject or not fact.object:
        return False
    wanted = _words(fact.object)
    return bool(wanted) and any(
        wanted <= _words(piece) and named(piece, fact.subject)
        for text in texts
        for piece in _pieces(text)
    )


@lru_cache(maxsize=4096)
def _pieces(text: str) -> tuple[str, ...]:
    """``text``'s sentences; in a conversation line, with its speaker only when the
    sentence is in the first person ("Umar Castillo: Dmitri reports to me.")."""
    found = []
    for line in text.splitlines():
        speaker, rest = _speaker(line.strip())
        for piece in (p.strip() for p in _PIECE.split(rest)):
            if piece:
                who = speaker if speaker and _FIRST_PERSON.search(piece) else ""
                found.append(f"{who}\n{piece}" if who else piece)
    return tuple(found)


@lru_cache(maxsize=16384)
def _words(text: str) -> frozenset[str]:
    return frozenset(w for w in _WORD.findall(text.casefold()) if w not in _GLUE)
