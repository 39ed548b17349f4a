"""A document changes only what it is about: the check before a fact is made false.

Before an invalidation, a close or a rewrite is applied (docs/design.md section 4, step
2), the document must name the fact: one of the entities the fact is indexed under
(``store.entities.fact_entities``: its structured subject and object, else the name its
text opens with and the other names in it), in one of the forms the entity index resolves
to that entity (``text.names.aliases``: the name, its head, a person's surname, an
acronym, a monarch's name), or in those of the name without a suffix ("Jr.", "III"), of
the proper part of a role's title ("United Kingdom" of "realm of the United Kingdom",
"Virginia House of Delegates" of "member of the ..."), or of the name and its head
without the words of its kind ("Twitch" of "Twitch Interactive", "Virginia" of "Virginia
House"; organisation-name normalisation, by a list of kinds, never of entities). A
decision that fails is refused: the fact keeps its truth (``edit.pipeline`` logs and
counts it, and ``bound_problem`` refuses a finished plan that breaks the rule).

No LM and no list of entities: names are compared on folded text (accents, possessive
"'s", apostrophes, hyphens and punctuation aside). A form of one word must keep its
capital (the surname "Good" is not the word "good"); a form of several words may be in any
case ("KING CHARLES III", "Danielle De Francesco"). The document is its text and title;
without a title, the words of its source URL's slug (``text.names.document_title``) count,
in any case, with the "s" a slug keeps of a possessive ("maggie-coles-lysters-...").

A fact of an office (its relation one of :data:`OFFICES`: head of state, head of government,
chairperson, chief executive; or, unstructured, its text naming the office) is also named
by the office's own nouns ("the King is head of state", "the monarch's reign",
"the chairman"): a role noun refers to whoever holds the office it names, so a document
about the office is about its holder's facts (a coreference of the role noun to the
office holder). A role noun qualified by another name names that one's office, not
the fact's: after a capitalised word ("Harambee CEO", "Joel King") or before " of "
and a capitalised word ("chairman of Intermediate Capital Group", "the president of the
US"). The nouns are of offices, never of entities; coaches and managers are not among
them (a club's manager is named by the club).

Forms without a capital ("member", the head of "member of the Virginia House of
Delegates"), lone common words ("This", "The") and lone words of a kind or a role
("Group", "University", "Member") name nothing, except a structured
subject written in lower case (a handle: "autimatic"). A fact that names nothing ("The
mayor is person 3.") gives the check nothing to look for and is not checked.

Measured on CLARK-News (``factstream eval subject-check``, docs/evaluation.md).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, get_args

from factstream.edit.grounding import COMMON_OPENERS
from factstream.store.entities import fact_entities
from factstream.text.names import aliases, document_title
from factstream.topics.records import Fact

__all__ = [
    "ABOUT_REASONS",
    "OFFICES",
    "AboutReason",
    "DocumentNames",
    "NotAbout",
    "check_about",
    "fact_names",
    "fact_office",
    "forms",
]

AboutReason = Literal["not_about", "restated"]
ABOUT_REASONS: tuple[AboutReason, ...] = get_args(AboutReason)

_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")
_APOSTROPHE = re.compile(r"['’‘`]")
_NON_WORD = re.compile(r"[\W_]+")
_SUFFIX = re.compile(r",?\s+(?:Jr\.?|Sr\.?|[IVX]+)$")


def _listed(words: str) -> list[str]:
    """The words of a whitespace-separated list."""
    return words.split()


# Words that say what kind of body a name is, not which: "Twitch Interactive" is named
# "Twitch", the "New Jersey General Assembly" by "New Jersey" (organisation-name
# normalisation, as company-name cleaners drop "Inc."; a list of kinds, not of entities).
_KINDS = frozenset(
    _listed(
        """inc inc. incorporated corp corp. corporation co co. company companies ltd ltd. limited
    llc plc ag sa gmbh group holdings holding interactive entertainment technologies
    technology media studios studio games labs software systems networks communications
    enterprises partners industries international association federation foundation
    institute authority agency council committee commission assembly general house senate
    legislature parliament congress party club team university college school academy
    hospital museum church bank"""
    )
)
_PARTICLE = frozenset(_listed("of the and for de da van von der du la le"))
# One-word heads of a title that names a role or a kind of thing, whose proper name follows
# " of " ("Member of the ...", "realm of the ..."); a head in lower case counts too.
_ROLES = frozenset(
    _listed(
        """member members president vice chair chairman chairwoman chairperson leader head
    minister secretary governor mayor senator representative speaker ambassador judge
    justice director chief commissioner premier deputy prime realm kingdom republic state
    province county city monarch king queen"""
    )
)


# An office (a relation, as Wikidata labels it) -> the nouns that name its holder.
OFFICES: dict[str, tuple[str, ...]] = {
    "head of state": ("head of state", "heads of state", "monarch", "king", "queen", "sovereign"),
    "head of government": ("head of government", "prime minister", "premier"),
    "chairperson": ("chairperson", "chair", "chairman", "chairwoman"),
    "chief executive officer": ("chief executive officer", "chief executive", "CEO"),
}
# Words before a role noun that leave it unqualified ("the King", "its head of state").
_DETERMINERS = frozenset(_listed("the a an its their his her our as this that new former"))
_QUALIFIED_AFTER = re.compile(r"\s+of\s+(?:the\s+)?[A-Z]")
_WORD_BEFORE = re.compile(r"([\w'’.-]+)[^\w]*$")


@lru_cache(maxsize=len(OFFICES))
def _role_nouns(office: str) -> re.Pattern[str]:
    nouns = "|".join(re.escape(n) for n in sorted(OFFICES[office], key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{nouns})(?!\w)", re.IGNORECASE)


def fact_office(fact: Fact) -> str | None:
    """The office ``fact`` states (one of :data:`OFFICES`): its relation, or, without one,
    the first office its text names; None for a fact of no office."""
    if fact.relation is not None:
        relation = fact.relation.strip().casefold()
        return relation if relation in OFFICES else None
    text = fact.text.casefold()
    return next((office for office in OFFICES if office in text), None)


def _unqualified(text: str, match: re.Match[str]) -> bool:
    """Whether the role noun at ``match`` names an office of no other named body."""
    if _QUALIFIED_AFTER.match(text, match.end()):
        return False
    before = _WORD_BEFORE.search(text, 0, match.start())
    word = before.group(1) if before else ""
    return not word[:1].isupper() or word.casefold() in _DETERMINERS


@dataclass(frozen=True)
class NotAbout:
    """Why a document may not make a fact false: it names none of the fact's entities
    (``not_about``), or it states the fact itself (``restated``).

    Attributes:
        reason: A bounded metric label, one of :data:`ABOUT_REASONS`.
        names: The fact's names the document was searched for (subject first); for
            ``restated``, the fact's text.
    """

    reason: AboutReason
    names: tuple[str, ...]

    @property
    def detail(self) -> str:
        """The names, for the log."""
        return "; ".join(self.names)


def _fold(text: str) -> str:
    """``text`` without accents, possessives, apostrophes or punctuation, padded by spaces."""
    plain = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in plain if not unicodedata.combining(ch))
    plain = _APOSTROPHE.sub("", _POSSESSIVE.sub("", plain))
    return f" {' '.join(_NON_WORD.sub(' ', plain).split())} "


def _is_name(form: str) -> bool:
    """Whether ``form`` can name something: a capital in it, and not a lone common word
    or a lone word of a kind or a role ("Group", "House", "Member")."""
    if not any(ch.isupper() for ch in form):
        return False
    word = form.strip().casefold().rstrip(".")
    return len(form.split()) > 1 or word not in COMMON_OPENERS | _KINDS | _ROLES


def _kind_less(name: str) -> str | None:
    """``name`` without the words that say what kind of body it is ("Twitch Interactive":
    "Twitch"; "Virginia House": "Virginia"), or None when nothing, or nothing else, is left."""
    words = name.split()
    while len(words) > 1 and words[-1].casefold() in _KINDS | _PARTICLE:
        words.pop()
    return " ".join(words) if len(words) < len(name.split()) else None


def _proper_part(name: str) -> str | None:
    """The proper name in a title whose head is one common noun: "realm of the United
    Kingdom": "United Kingdom"; "Member of the New Jersey General Assembly": "New Jersey
    General Assembly" (a role, written with or without its capital). None for a name that
    is its own ("Bank of America", "Charles III of the United Kingdom")."""
    head, _, tail = name.partition(" of ")
    role = head.strip()
    if not tail or " " in role or not (role.islower() or role.casefold() in _ROLES):
        return None
    return re.sub(r"^(?:the|The)\s+", "", tail.strip()) or None


def _stands_for(name: str) -> tuple[set[str], set[str]]:
    """The names ``name`` stands for beside its own: (those to take with their aliases,
    those to take as written). The proper part of a role's title (``_proper_part``), and
    each of these and their heads less the words of their kind (``_kind_less``: "Twitch",
    "Virginia", "New Jersey")."""
    full = {name}
    part = _proper_part(name)
    if part:
        full.add(part)
    heads = {h.strip() for n in full for h in (n, re.split(r",| of ", n, maxsplit=1)[0])}
    plain = {less for h in heads if (less := _kind_less(h))}
    return full - {name}, plain


@lru_cache(maxsize=16_384)  # a pure function of names that recur across documents
def forms(name: str, *, subject: bool = False) -> tuple[str, ...]:
    """The folded forms under which a document names ``name`` (its aliases, and those of
    the name without a suffix), names only; a ``subject`` counts as written even without
    a capital (a handle: "autimatic"), as an alias does, from two characters up. Empty:
    ``name`` names nothing."""
    name = name.strip()
    names, plain = {name, _SUFFIX.sub("", name)}, set()
    for own in tuple(names):
        full, kind_less = _stands_for(own)
        names |= full
        plain |= kind_less
    found = {f for f in {a for n in names for a in aliases(n)} | plain if _is_name(f)}
    if subject and len(name) >= 2 and name.casefold() not in COMMON_OPENERS:
        found.add(name)
    return tuple(sorted({_fold(f) for f in found} - {" ", "  "}))


def _entities(fact: Fact) -> list[tuple[str, tuple[str, ...]]]:
    """Each entity ``fact`` is indexed under, subject first, with its forms (none: left out)."""
    entities = fact_entities(fact)
    found = [(entities.subject, forms(entities.subject, subject=True))] if entities.subject else []
    found += [(name, forms(name)) for name in dict.fromkeys(entities.objects)]
    return [(name, named) for name, named in found if named]


def fact_names(fact: Fact) -> tuple[str, ...]:
    """The names the check looks for before a document may make ``fact`` false (none: the
    fact is not checked)."""
    return tuple(name for name, _ in _entities(fact))


class DocumentNames:
    """A document as names are looked for in it: its text and title, or its URL's slug."""

    def __init__(self, text: str, title: str | None = None, source: str | None = None) -> None:
        self._raw = f"{text}\n{title or ''}"
        self._text = _fold(self._raw)
        self._lower = self._text.casefold()
        slug = None if title and title.strip() else document_title(None, source)
        self._slug = _fold(slug).casefold() if slug else ""

    def has(self, form: str) -> bool:
        """Whether the document has the folded ``form`` (one of ``forms``)."""
        lower = form.casefold()
        if form in self._text or (form.count(" ") > 2 and lower in self._lower):
            return True
        return bool(self._slug) and (lower in self._slug or f"{lower[:-1]}s " in self._slug)

    def names(self, name: str, *, subject: bool = False) -> bool:
        """Whether the document names ``name`` in any of its ``forms``."""
        return any(self.has(form) for form in forms(name, subject=subject))

    def names_office(self, office: str) -> bool:
        """Whether the document names ``office`` (one of :data:`OFFICES`) by a role noun
        that no other name qualifies."""
        pattern = _role_nouns(office)
        return any(_unqualified(self._raw, m) for m in pattern.finditer(self._raw))

    def states(self, text: str) -> bool:
        """Whether the document (or its title) holds ``text`` word for word, compared as the
        names are (accents, punctuation and case aside), for a text of three words or more."""
        folded = _fold(text).casefold()
        return folded.count(" ") > 3 and folded in self._lower

    def about(self, fact: Fact, *, offices: bool = True) -> NotAbout | None:
        """Why the document may not make ``fact`` false, or None when it names one of the
        fact's entities, or (with ``offices``) the office the fact states, or the fact
        names none. A document that states the fact word for word (``states``) may not make it
        false either: it asserts the fact (reason ``restated``)."""
        if self.states(fact.text):
            return NotAbout("restated", (fact.text,))
        entities = _entities(fact)
        if not entities or any(self.has(form) for _, named in entities for form in named):
            return None
        office = fact_office(fact) if offices else None
        if office is not None and self.names_office(office):
            return None
        return NotAbout("not_about", tuple(name for name, _ in entities))


def check_about(
    fact: Fact, text: str, *, title: str | None = None, source: str | None = None
) -> NotAbout | None:
    """Why a document (its ``text``, ``title`` and ``source`` URL) may not make ``fact``
    false, or None when it names one of the fact's entities or the fact names none."""
    return DocumentNames(text, title, source).about(fact)
