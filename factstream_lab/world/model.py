"""A world's state: who works where, as what, lives where, is married to and managed by whom.

The state is a map from (subject, relation) to object; a relation a subject lacks is absent.
Employers, organisations' chief executives and managers obey rules (:func:`problems` checks
them): one value per (subject, relation) by construction, spouses symmetric, a chief
executive works at the organisation, a manager works at the same organisation as the person
they manage. :func:`settle` derives the chief executives and managers from the employers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = [
    "CITY",
    "CHIEF_EXECUTIVE",
    "EMPLOYER",
    "JOB_TITLE",
    "MANAGER",
    "RELATIONS",
    "RESIDENCE",
    "SPOUSE",
    "Cast",
    "State",
    "employees",
    "problems",
    "settle",
]

# Relation names as triples.jsonl writes them (natural language, like CLARK-News').
EMPLOYER = "employer"
JOB_TITLE = "job title"
RESIDENCE = "residence"
SPOUSE = "spouse"
MANAGER = "manager"
CITY = "headquarters location"
CHIEF_EXECUTIVE = "chief executive officer"
RELATIONS = (EMPLOYER, JOB_TITLE, RESIDENCE, SPOUSE, MANAGER, CITY, CHIEF_EXECUTIVE)

State = dict[tuple[str, str], str]


@dataclass(frozen=True)
class Cast:
    """Who and what exists: people, organisations, cities, titles; and who knows whom.

    Attributes:
        people: Full names, in a fixed order.
        orgs: Organisation names.
        cities: City names.
        titles: Job titles.
        friends: Pairs of people who know each other outside work (a ring: nobody alone).
        joined: When each person joined their current employer (step, then cast order):
            the earliest-joined employee leads (chief executive, then first manager).
    """

    people: tuple[str, ...]
    orgs: tuple[str, ...]
    cities: tuple[str, ...]
    titles: tuple[str, ...]
    friends: frozenset[frozenset[str]]
    joined: dict[str, tuple[int, int]] = field(default_factory=dict)

    def knows(self, state: Mapping[tuple[str, str], str], person: str) -> list[str]:
        """The people ``person`` knows now: friends, colleagues, spouse; in cast order."""
        employer = state.get((person, EMPLOYER))
        return [
            other
            for other in self.people
            if other != person
            and (
                frozenset((person, other)) in self.friends
                or state.get((person, SPOUSE)) == other
                or (employer is not None and state.get((other, EMPLOYER)) == employer)
            )
        ]


def employees(state: Mapping[tuple[str, str], str], cast: Cast, org: str) -> list[str]:
    """The people employed by ``org``, earliest joined first."""
    staff = [p for p in cast.people if state.get((p, EMPLOYER)) == org]
    return sorted(staff, key=lambda p: cast.joined.get(p, (0, 0)))


def settle(state: State, cast: Cast) -> None:
    """Derive chief executives and managers from the employers, in place.

    An organisation's chief executive stays while they work there; else the earliest-joined
    employee takes over (none without employees). The chief executive has no manager; the
    earliest-joined other employee (the lead) reports to the chief executive, everyone else
    to the lead.
    """
    for org in cast.orgs:
        staff = employees(state, cast, org)
        ceo = state.get((org, CHIEF_EXECUTIVE))
        if ceo not in staff:
            state.pop((org, CHIEF_EXECUTIVE), None)
            ceo = staff[0] if staff else None
            if ceo is not None:
                state[(org, CHIEF_EXECUTIVE)] = ceo
        if ceo is None:
            continue
        others = [p for p in staff if p != ceo]
        for i, person in enumerate(others):
            state[(person, MANAGER)] = ceo if i == 0 else others[0]
        state.pop((ceo, MANAGER), None)
    for person in cast.people:
        if (person, EMPLOYER) not in state:
            state.pop((person, MANAGER), None)


def problems(state: Mapping[tuple[str, str], str], cast: Cast) -> list[str]:
    """Every broken rule of ``state`` (empty: a consistent world)."""
    found = []
    for person in cast.people:
        spouse = state.get((person, SPOUSE))
        if spouse is not None and (spouse == person or state.get((spouse, SPOUSE)) != person):
            found.append(f"{person}'s spouse {spouse} is not married to them")
        manager = state.get((person, MANAGER))
        if manager is not None:
            employer = state.get((person, EMPLOYER))
            if manager == person or employer is None:
                found.append(f"{person} manages themself or has no employer")
            elif state.get((manager, EMPLOYER)) != employer:
                found.append(f"{person}'s manager {manager} works elsewhere")
        if (person, EMPLOYER) in state and (person, JOB_TITLE) not in state:
            found.append(f"{person} works without a job title")
    for org in cast.orgs:
        ceo = state.get((org, CHIEF_EXECUTIVE))
        if ceo is not None and state.get((ceo, EMPLOYER)) != org:
            found.append(f"{org}'s chief executive {ceo} works elsewhere")
        if (org, CITY) not in state:
            found.append(f"{org} has no headquarters")
    return found
