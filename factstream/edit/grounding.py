"""Grounded output (design.md section 4 step 5): refuse facts their sources do not support.

Every added or rewritten fact is checked against what the LM was shown before it reaches
the changelog. A fact is refused, for the first reason that applies:

- ``prompt_text``: it shares a run of :data:`MIN_PROMPT_WORDS` words with the fixed text of
  a registered prompt (instructions, rules, worked examples), a run its sources lack. The
  prompt texts come from the registry, rendered with probe contexts, so a new version is
  covered without a change here. Numbers count as one word, whatever their value: a prompt
  sentence that shows the document's date ("The document's date is 2011-07-19.") is the
  prompt's own text with any date in it.
- ``placeholder``: it contains one of :data:`PLACEHOLDERS` (a stand-in a model writes
  for a value it lacks: "the rewritten fact", "John Doe", "<...>", "the document" as what
  a fact is about), one its sources lack.
- ``ungrounded_entity``: a word of a name in it (a capitalised word inside a sentence, or
  a run of capitalised words opening one, or an acronym opening one; not another lone word
  opening one) is in no source. Words
  are compared folded: case, diacritics, possessives and punctuation aside; an acronym
  counts as grounded where a source spells out its words' initials ("UN").
- ``ungrounded_number``: a number in it (a year, a count, a day) is in no source, whether
  the source writes it as digits (``1,000``, ``1000``) or in words (``ten``, ``5 million``).

The sources are the document (its text and title, and its date, which the prompts show),
for a rewrite the fact it replaces, and any other text the prompt showed (the facts still
true). The check is pure and deterministic: a replayed document is refused the same edits.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache, lru_cache
from typing import Any, Literal, get_args

from factstream.prompts.models import DocumentView, Prompt
from factstream.prompts.registry import sample_contexts

__all__ = [
    "COMMON_OPENERS",
    "MIN_PROMPT_WORDS",
    "PLACEHOLDERS",
    "REASONS",
    "Refusal",
    "RefusalReason",
    "check_grounded",
    "grounded_anchors",
    "no_words",
    "prompt_ngrams",
    "prompt_texts",
]

# unresolved_person: a conversation's fact still in the first or second person
# (:mod:`factstream.edit.persons` checks it).
# no_words: a fact with no word in it (a rewrite to ",": :func:`no_words`).
RefusalReason = Literal[
    "no_words",
    "prompt_text",
    "placeholder",
    "ungrounded_entity",
    "ungrounded_number",
    "unresolved_person",
]
REASONS: tuple[RefusalReason, ...] = get_args(RefusalReason)

# Six words: five-word runs of a worked example ("is the chief executive of") are common
# in true facts; six-word ones ("doe retired as chief executive of") are the example's own.
MIN_PROMPT_WORDS = 6

# Stand-ins a model writes where it lacks a value, reviewed: the answer formats' own words
# ("the rewritten fact"), the stock names of examples, template brackets and ellipses,
# non-values. Each is a regular expression matched on the fact's text, case ignored.
PLACEHOLDERS: tuple[str, ...] = (
    r"\b(?:the )?(?:rewritten|new|extracted|updated|corrected) fact\b",
    r"\bfact text\b",
    r"\b(?:john|jane|richard|mary) (?:doe|roe)\b",
    r"\bacme\b",
    r"\bexample\b",
    r"\bplaceholder\b",
    # What the prompts call the document, written where the fact's subject belongs.
    r"\b(?:the|this) (?:document|article|text above)\b",
    # The model talking about facts instead of stating one ("The fact that ... This is not
    # true, but the facts are: ...", seen from the default model in the demo's rewrites).
    r"^\s*the fact that\b",
    r"\bthe facts? (?:is|are)\s*:",
    r"\b(?:this|that|it)(?: fact)? (?:is|was) (?:not |never )?(?:true|false|correct|incorrect)\b",
    r"\bno longer (?:true|correct|the case)\b",
    r"\blorem ipsum\b",
    r"\bn/a\b",
    r"\btbd\b",
    r"\bxxx+\b",
    r"(?<![\w.])[XYZ](?![\w.'’])",  # a lone capital standing for a name: "X is the CEO of Y"
    r"<[^<>]*>",
    r"\[[^\[\]]*\]",
    r"\{[^{}]*\}",
    r"\.\.\.|…",
    r"___+",
)
_PLACEHOLDER_RES = tuple(re.compile(p, re.IGNORECASE) for p in PLACEHOLDERS)


def _listed(words: str) -> tuple[str, ...]:
    """The words of a whitespace-separated list (long word lists stay readable)."""
    return tuple(words.split())


# Words that open a sentence without naming anything: a capitalised one there is no name.
COMMON_OPENERS = frozenset(
    _listed(
        """a an the this that these those there here it its he she his her hers they them their
    we our you your i my me who whom whose which what when where while why how after before
    during since until as at by for from in into of on onto over under with without about
    against among between through throughout both all any each every either neither no not
    none some many most much more less few several one other another such and but or nor so
    yet if then than also still now currently formerly former previously today recently
    later earlier once however although though because despite according"""
    )
)
# Titles and honorifics a fact may put before a name its source writes without them.
_TITLES = frozenset(_listed("mr mrs ms miss dr sir dame st"))

_NUMBER_WORDS = {
    word: value
    for value, word in enumerate(
        _listed(
            "zero one two three four five six seven eight nine ten eleven twelve thirteen "
            "fourteen fifteen sixteen seventeen eighteen nineteen twenty"
        )
    )
}
_NUMBER_WORDS.update(
    {
        word: 10 * tens
        for tens, word in enumerate(_listed("thirty forty fifty sixty seventy eighty ninety"), 3)
    }
)
_NUMBER_WORDS.update({"dozen": 12, "hundred": 100, "thousand": 1000})
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_MONTHS = _listed(
    "january february march april may june july august september october november december"
)

_POSSESSIVE = re.compile(r"(?<=\w)['’]s?\b")
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
_NUMBER = re.compile(r"\d+(?:[,.]\d+)*")
_SENTENCE_END = re.compile(r"[.!?;:]$")


@dataclass(frozen=True)
class Refusal:
    """Why a fact is refused, and what gave it away (for the log).

    Attributes:
        reason: A bounded metric label, one of :data:`REASONS`.
        detail: The words, number or placeholder the sources lack.
    """

    reason: RefusalReason
    detail: str


def _fold(text: str) -> str:
    """Lower case, no diacritics, no possessives."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _POSSESSIVE.sub("", plain).casefold()


def _words(text: str) -> list[str]:
    """The folded words of ``text``; apostrophes and hyphens split them."""
    return re.findall(r"[^\W_]+", _fold(text))


def _gram_words(text: str) -> list[str]:
    """The folded words of ``text`` as runs are compared: every number one word, ``#``."""
    return ["#" if word.isdigit() else word for word in _words(text)]


def _number_value(token: str) -> str | None:
    """``1,000`` and ``1000`` as ``1000``; ``01`` as ``1``; ``2.50`` as ``2.5``."""
    plain = token.replace(",", "")
    try:
        value = float(plain)
    except ValueError:
        return None
    return str(int(value)) if value.is_integer() else repr(value)


class _Sources:
    """What a fact may draw on: folded words, numbers, acronyms and text of every source."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.text = "\n".join(_fold(t) for t in texts)
        self.words = set(_words(self.text))
        self.ngrams = set(_ngrams(_gram_words(self.text), MIN_PROMPT_WORDS))
        self.numbers: set[str] = set()
        self.acronyms: set[str] = set()
        for text in texts:
            self.numbers |= _numbers_in(text)
            self.acronyms |= _initials(text)

    def has_words(self, words: str) -> bool:
        found = re.search(rf"(?<![^\W_]){re.escape(words)}(?![^\W_])", self.text)
        return found is not None


@lru_cache(maxsize=64)
def _sources(texts: tuple[str, ...]) -> _Sources:
    """The sources of ``texts``, read once: a document's facts are checked one by one
    against the same texts (issue 37: the document was read again for each of its facts)."""
    return _Sources(texts)


def _numbers_in(text: str) -> set[str]:
    """Every number ``text`` writes, in digits or words, with scales applied (5 million)."""
    found = set()
    tokens = re.findall(r"\d+(?:[,.]\d+)*|[^\W\d_]+", _fold(text))
    for i, token in enumerate(tokens):
        value = _number_value(token) if token[0].isdigit() else None
        if value is None and token in _NUMBER_WORDS:
            value = str(_NUMBER_WORDS[token])
        if value is None:
            continue
        found.add(value)
        scale = _SCALES.get(tokens[i + 1]) if i + 1 < len(tokens) else None
        if scale is not None:
            found.add(_number_value(str(float(value) * scale)) or value)
    return found


_ACRONYM_SKIPS = frozenset(_listed("of the and for"))


def _initials(text: str) -> set[str]:
    """The initials of every run of two to six words (United Nations, chief executive officer).

    Runs count with and without their small words (United States of America: usa, usoa).
    """
    words = _words(text)
    found = set()
    for start in range(len(words)):
        run = words[start : start + 6]
        for end in range(2, len(run) + 1):
            found.add("".join(word[0] for word in run[:end]))
            kept = [word for word in run[:end] if word not in _ACRONYM_SKIPS]
            found.add("".join(word[0] for word in kept))
    return found


def _ngrams(words: Sequence[str], n: int) -> Iterable[tuple[str, ...]]:
    return (tuple(words[i : i + n]) for i in range(len(words) - n + 1))


def _date_texts(date: datetime) -> list[str]:
    """The ways a fact may write the document's date, which every editing prompt shows."""
    return [date.date().isoformat(), f"{_MONTHS[date.month - 1]} {date.day} {date.year}"]


# Probe contexts: the data parts say "zqx" words no fact contains, so what the rendered
# messages share with a fact is the prompt's own text. A task without a probe
# (prompts.registry.sample_contexts) fails the registry test
# (tests/unit/edit/test_grounding.py), never silently.
_PROBE = "zqxdoc zqxtext"
_PROBE_DOC = DocumentView(text=_PROBE, title=None, timestamp=datetime(1111, 11, 11, tzinfo=UTC))


def _probe_word(role: str) -> str:
    return _PROBE if role == "turn" else f"zqx{role}"


def prompt_texts(prompts: Mapping[str, Prompt[Any, Any]]) -> list[str]:
    """Every message of every prompt in ``prompts``, rendered with probe data.

    Raises:
        KeyError: A prompt's task has no probe context here.
    """
    texts = []
    for prompt_id in sorted(prompts):
        prompt = prompts[prompt_id]
        for ctx in sample_contexts(_PROBE_DOC, _probe_word)[prompt.name]:
            texts += [message.content for message in prompt.messages(ctx)]
    return texts


def prompt_ngrams(prompts: Mapping[str, Prompt[Any, Any]]) -> frozenset[tuple[str, ...]]:
    """The runs of :data:`MIN_PROMPT_WORDS` words of the prompts' own text."""
    found: set[tuple[str, ...]] = set()
    for text in prompt_texts(prompts):
        found.update(
            gram
            for gram in _ngrams(_gram_words(text), MIN_PROMPT_WORDS)
            if not any(word.startswith("zqx") for word in gram)
        )
    return frozenset(found)


@cache
def _registry_ngrams() -> frozenset[tuple[str, ...]]:
    from factstream.prompts.registry import PROMPTS  # the registry imports every prompt

    return prompt_ngrams(PROMPTS)


def no_words(fact: str) -> Refusal | None:
    """A ``no_words`` refusal of ``fact`` when it has no word (no letter or digit), else None.

    Such a text states no fact (the demo's rewrite of a true fact to ","), and no other
    check finds anything in it to refuse: it has no name, number or phrase.
    """
    return None if _WORD.search(fact) else Refusal("no_words", fact.strip() or repr(fact))


def _copied(fact: str, sources: _Sources, grams: frozenset[tuple[str, ...]]) -> Refusal | None:
    for gram in _ngrams(_gram_words(fact), MIN_PROMPT_WORDS):
        if gram in grams and gram not in sources.ngrams:
            return Refusal("prompt_text", " ".join(gram))
    return None


def _placeholder(fact: str, sources: _Sources) -> Refusal | None:
    for pattern in _PLACEHOLDER_RES:
        for found in pattern.finditer(fact):
            if not sources.has_words(_fold(found[0])) and _fold(found[0]) not in sources.text:
                return Refusal("placeholder", found[0])
    return None


def _name_words(fact: str) -> list[str]:
    """The words of names in ``fact``: capitalised inside a sentence, or opening one as part
    of a run of capitalised words ("Prince William ..."), a common word aside ("The").

    A lone capitalised word opening a sentence is not checked: it is as often a common
    word ("Founded in ...") as a name, and no word list tells them apart. An acronym
    ("NCAA") is: no common word is written in capitals.
    """
    tokens = fact.split()
    names: list[str] = []
    opens = True  # the next token opens a sentence
    for i, raw in enumerate(tokens):
        words = _WORD.findall(raw)
        if words and words[0][:1].isupper():
            following = _WORD.findall(tokens[i + 1]) if i + 1 < len(tokens) else []
            in_run = bool(following) and following[0][:1].isupper() and raw[-1:].isalnum()
            common = _fold(words[0]) in COMMON_OPENERS
            if not opens or (in_run and not common) or _is_acronym(words[0]):
                names += words
        # An initial ("J.") or a title ("Dr.") ends no sentence.
        opens = bool(_SENTENCE_END.search(raw)) and not re.fullmatch(r"\W*[A-Z][a-z]?\.", raw)
    return names


def _is_acronym(word: str) -> bool:
    """Two or more capitals and no lower-case letter ("UN", "NCAA", "F1" aside: no)."""
    return len(word) >= 2 and word.isalpha() and word.isupper()


def _ungrounded_entity(fact: str, sources: _Sources) -> Refusal | None:
    for word in _name_words(fact):
        folded = _words(word)
        if all(w in sources.words or w in _TITLES for w in folded):
            continue
        if _is_acronym(word) and _fold(word) in sources.acronyms:
            continue
        return Refusal("ungrounded_entity", word)
    return None


def _fact_numbers(fact: str) -> Iterable[tuple[str, str]]:
    """Each number ``fact`` writes in digits: (as written, its value); a dotted run that is
    no number (a date, 2024.03.01) counts part by part."""
    for token in _NUMBER.findall(_fold(fact)):
        parts = [token] if _number_value(token) is not None else token.split(".")
        for part in parts:
            value = _number_value(part)
            if value is not None:
                yield token, value


def _ungrounded_number(fact: str, sources: _Sources) -> Refusal | None:
    for token, value in _fact_numbers(fact):
        if value not in sources.numbers:
            return Refusal("ungrounded_number", token)
    return None


def grounded_anchors(fact: str, source: str) -> frozenset[str]:
    """The names and numbers of ``fact`` that ``source`` writes, as this check compares them:
    the folded words of its names (titles aside), and its numbers' values."""
    words = set(_words(source))
    names = {w for name in _name_words(fact) for w in _words(name) if w not in _TITLES}
    numbers = {value for _, value in _fact_numbers(fact)} & _numbers_in(source)
    return frozenset((names & words) | numbers)


def check_grounded(
    fact_text: str,
    document_text: str,
    old_fact_text: str | None = None,
    *,
    also: Sequence[str] = (),
    date: datetime | None = None,
    prompts: Mapping[str, Prompt[Any, Any]] | None = None,
) -> Refusal | None:
    """Why ``fact_text`` is not grounded in its sources, or None when it is.

    Args:
        fact_text: The added or rewritten fact.
        document_text: The document it came from (title and text).
        old_fact_text: For a rewrite, the fact it replaces.
        also: Other text the prompt showed the LM (the facts still true).
        date: The document's event date, which the prompts show.
        prompts: Whose text a fact may not copy; default every registered prompt.
    """
    texts = [document_text, *([old_fact_text] if old_fact_text else []), *also]
    if date is not None:
        texts += _date_texts(date)
    sources = _sources(tuple(texts))
    grams = _registry_ngrams() if prompts is None else prompt_ngrams(prompts)
    return (
        no_words(fact_text)
        or _copied(fact_text, sources, grams)
        or _placeholder(fact_text, sources)
        or _ungrounded_entity(fact_text, sources)
        or _ungrounded_number(fact_text, sources)
    )
