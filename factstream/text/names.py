"""Names in a document and whether a fact's subject (or object) is one of them.

The editor's retrieval lifts facts about the entities a document names (docs/evaluation.md,
"Does retrieval find what a document supersedes?"). Names are runs of capitalised words; an
entity counts as named by its full name, its head (before a comma or " of ": "Charles III"
for "Charles III of the United Kingdom"), the surname of a two- or three-word person-like
name ("Emmert" for "Mark Emmert"), the name of a regnal name ("Charles" for "Charles
III") and the acronym of a name of three or more capitalised
words ("NCAA"). No model, no list of entities: a regex over the text.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from urllib.parse import urlsplit

__all__ = ["aliases", "document_names", "document_title", "leading_name", "mentions"]

_CAP = r"[A-Z][\w'’.&-]*"
# A capitalised word, then more of them, possibly joined by a few lower-case particles.
_NAME = re.compile(rf"{_CAP}(?:\s+(?:(?:of|the|de|da|van|von|der|du|la|le)\s+)*{_CAP})*")
_SUFFIX = re.compile(r"[IVX]+|Jr\.?|Sr\.?")
_REGNAL = re.compile(r"[IVX]+")
_PARTICLES = {"of", "the", "and", "for", "de", "da", "van", "von", "der", "du", "la", "le"}
# Capitalised at the start of a sentence, not names.
_NOT_NAMES = {"A", "An", "The", "In", "On", "At", "It", "He", "She", "They", "This", "That"}
_MIN_SURNAME = 4  # shorter surnames ("Cho", "Ta") match too much as a single word
_SLUG_SPLIT = re.compile(r"[-_+.]+")
_MIN_SLUG_WORDS = 3  # fewer is a section ("news", "uk-politics"), not a headline


def document_names(text: str) -> list[str]:
    """The capitalised names in ``text``, in order of first appearance, without repeats."""
    return list(dict.fromkeys(match.group(0).rstrip(".") for match in _NAME.finditer(text)))


def document_title(title: str | None, source: str | None) -> str | None:
    """The document's title, else the words of its source URL's slug, title-cased.

    A news URL's last path segment is usually its headline ("olimpia-milan-officially-add-
    veteran-forward-deshaun-thomas"); numbers and a file extension are dropped. ``None`` when
    neither gives three words.
    """
    if title and title.strip():
        return title.strip()
    if not source or "://" not in source:
        return None
    path = urlsplit(source).path
    segments = [s for s in path.split("/") if s]
    for segment in reversed(segments):
        stem = re.sub(r"\.[a-z]{2,5}$", "", segment)
        words = [w for w in _SLUG_SPLIT.split(stem) if w.isalpha()]
        if len(words) >= _MIN_SLUG_WORDS:
            return " ".join(w.capitalize() for w in words)
    return None


def leading_name(text: str) -> str | None:
    """The name ``text`` opens with (a fact's subject, when it has no structure), if any."""
    words = text.split()
    while words and words[0] in _NOT_NAMES:
        words.pop(0)
    match = _NAME.match(" ".join(words))
    return match.group(0).rstrip(".") if match else None


@lru_cache(maxsize=65536)
def aliases(name: str, *, short: bool = True) -> frozenset[str]:
    """The forms under which a document may name ``name``; ``short`` adds surname, acronym."""
    name = name.strip()
    found = {name}
    head = re.split(r",| of ", name, maxsplit=1)[0].strip()
    found.add(head)
    if short:
        words = head.split()
        capitals = [w for w in re.findall(r"[\w'’.-]+", name) if w[:1].isupper()]
        if len(capitals) >= 3 and not any(w.lower() in _PARTICLES for w in capitals):
            found.add("".join(w[0] for w in capitals))
        if (
            2 <= len(words) <= 3
            and all(w[:1].isupper() for w in words)
            and len(words[-1]) >= _MIN_SURNAME
            and not _SUFFIX.fullmatch(words[-1])
        ):
            found.add(words[-1])
        if len(words) == 2 and _REGNAL.fullmatch(words[1]):
            found.add(words[0])  # a monarch or pope by name alone: "King Charles"
    return frozenset(a for a in found if len(a) >= 2)


@lru_cache(maxsize=65536)
def _compiled(alias: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(alias)}(?!\w)")


@lru_cache(maxsize=1024)
def _folded(text: str) -> str:
    """``text`` without accents: "Bajraktarević" as a URL or a keyboard writes it."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def mentions(text: str, name: str | None, *, short: bool = True) -> bool:
    """Whether ``text`` names ``name`` (case-sensitive; a multi-word form also in capitals).

    Accents do not count: "Bajraktarevic" names "Esmir Bajraktarević".
    """
    if not name:
        return False
    text = _folded(text)
    upper = text.upper()
    for alias in {_folded(a) for a in aliases(name, short=short)}:
        if _compiled(alias).search(text):
            return True
        if " " in alias and _compiled(alias.upper()).search(upper):
            return True
    return False
