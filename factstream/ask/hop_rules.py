"""The rule planner of multi-hop questions: "the R of the R of E" and "E's R's R" shapes.

A question is read as an anchor entity E and the relations followed from it, first hop
first: "Who is the chief executive of Umar Castillo's employer?" is E = "Umar Castillo",
relations ("employer", "chief executive"). The noun phrase nests both ways: "the R of NP"
and "NP's R", down to a name (a run with a capital letter); a few relative clauses name
a relation too ("the company NP works for": employer). A few question verbs name the
last relation themselves ("Where does NP live?": residence; "Who employs NP?": employer;
"Where is NP headquartered?": headquarters location; "Who is NP married to?": spouse).
Anything else is not planned here (None): the LM planner (``plan_hops.v1``) or the single
retrieval takes it (docs/design.md section 6).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["HopPlan", "hop_question", "plan_by_rules"]

# A relation word: lower case, or an acronym in capitals ("CEO").
_REL = r"(?:[a-z][a-z-]*|[A-Z]{2,5})(?:\s+(?:[a-z][a-z-]*|[A-Z]{2,5}))*"
# The first " of " splits "the R of NP" (R is short: "the spouse of the manager of E").
_OF = re.compile(rf"^(?:the\s+|an?\s+)?(?P<rel>{_REL}?)\s+of\s+(?P<rest>.+)$")
_POSSESSIVE = re.compile(rf"^(?P<rest>.+?)['’]s?\s+(?P<rel>{_REL})$")
_NAME = re.compile(r"[A-Z0-9]")
_OWNED = re.compile(r"['’]s\b")  # a possessive left in a "name": no rule read the phrase
# Question verbs that name the last relation: (pattern over the whole question, relation).
_VERBS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), relation)
    for pattern, relation in (
        (r"^where (?:does|did) (?P<np>.+) live$", "residence"),
        (r"^where (?:does|did) (?P<np>.+) work$", "employer"),
        (r"^(?:who|what company|which company) (?:employs|employed) (?P<np>.+)$", "employer"),
        (r"^who (?:does|did) (?P<np>.+) work for$", "employer"),
        (r"^who (?:does|did) (?P<np>.+) report to$", "manager"),
        (r"^where (?:is|was) (?P<np>.+) (?:headquartered|based)$", "headquarters location"),
        (r"^who (?:is|was) (?P<np>.+) married to$", "spouse"),
    )
)
# Relative clauses that name a relation: "the company Ana works for" is Ana's employer.
_CLAUSES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), relation)
    for pattern, relation in (
        (
            r"^(?:the\s+)?(?:company|organi[sz]ation|firm|employer)\s+(?:that\s+|which\s+)?"
            r"(?P<rest>.+?)\s+(?:works?|worked)\s+(?:for|at)$",
            "employer",
        ),
        (
            r"^(?:the\s+)?(?:city|town|place)\s+(?:that\s+|where\s+)?(?P<rest>.+?)\s+"
            r"(?:lives?|lived)(?:\s+in)?$",
            "residence",
        ),
        (
            r"^(?:the\s+)?(?:person|one)\s+(?:who\s+|that\s+)?(?P<rest>.+?)\s+"
            r"(?:is|was)\s+married\s+to$",
            "spouse",
        ),
    )
)
_COPULA = re.compile(
    r"^(?:who|what|where|which)(?:\s+(?:is|was|are|were)|['’]s)\s+(?P<np>.+)$", re.IGNORECASE
)
_MAX_DEPTH = 6  # nesting beyond this is not a question anyone asks; stop the recursion


@dataclass(frozen=True)
class HopPlan:
    """An anchor entity and the relations followed from it, first hop first."""

    anchor: str
    relations: tuple[str, ...]
    source: str = "rules"  # rules, or the LM prompt version that planned it

    @property
    def hops(self) -> int:
        return len(self.relations)


def hop_question(entity: str, relation: str) -> str:
    """The sub-question of one hop: "What is the employer of Umar Castillo?"."""
    return f"What is the {relation} of {entity}?"


def plan_by_rules(question: str) -> HopPlan | None:
    """The question's anchor and relations, or None when no rule reads it."""
    text = " ".join(question.strip().split()).rstrip("?.! ")
    for pattern, relation in _VERBS:
        match = pattern.match(text)
        if match:
            parsed = _noun_phrase(match.group("np"), 0)
            return None if parsed is None else HopPlan(parsed[0], (*parsed[1], relation))
    match = _COPULA.match(text)
    if match is None:
        return None
    parsed = _noun_phrase(match.group("np"), 0)
    if parsed is None or not parsed[1]:
        return None
    return HopPlan(parsed[0], parsed[1])


def _noun_phrase(text: str, depth: int) -> tuple[str, tuple[str, ...]] | None:
    """(anchor, relations) of a noun phrase: "the R of NP", "NP's R", or a name."""
    text = text.strip()
    if depth > _MAX_DEPTH or not text:
        return None
    for pattern, relation in _CLAUSES:
        match = pattern.match(text)
        inner = None if match is None else _noun_phrase(match.group("rest"), depth + 1)
        if inner is not None:
            return inner[0], (*inner[1], relation)
    for pattern in (_OF, _POSSESSIVE):
        match = pattern.match(text)
        if match is None:
            continue
        inner = _noun_phrase(match.group("rest"), depth + 1)
        if inner is not None:
            return inner[0], (*inner[1], match.group("rel"))
    name = re.sub(r"^the\s+", "", text)
    return (name, ()) if _NAME.match(name) and not _OWNED.search(name) else None
