"""The world as a Markov chain: a seeded cast, a first state, and transitions between states.

Each step applies a few transitions, each chosen (with weights) among those the current
state allows; a transition changes several relations at once: a new job can move a person
to the employer's city (and their spouse with them) and gives them, and the colleagues they
leave, a new manager; a marriage moves one spouse to the other's city; an organisation that
moves its headquarters takes its chief executive along. Managers and chief executives are
then derived again (:func:`factstream_lab.world.model.settle`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from factstream_lab.world.model import (
    CHIEF_EXECUTIVE,
    CITY,
    EMPLOYER,
    JOB_TITLE,
    RESIDENCE,
    SPOUSE,
    Cast,
    State,
    employees,
    settle,
)

__all__ = ["Transition", "initial_state", "make_cast", "step"]

FIRST_NAMES = (
    "Ana", "Ben", "Chloe", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas",
    "Kavya", "Luca", "Maya", "Nikolai", "Olivia", "Pedro", "Quinn", "Rosa", "Samir", "Tara",
    "Umar", "Vera", "Wes", "Yara", "Zoe",
)  # fmt: skip
SURNAMES = (
    "Silva", "Okafor", "Lindqvist", "Moreau", "Tanaka", "Haddad", "Novak", "Reyes", "Kowalski",
    "Brennan", "Castillo", "Nakamura", "Osei", "Petrov", "Quist", "Rahman", "Sato", "Varga",
    "Whitfield", "Zhou",
)  # fmt: skip
ORGS = (
    "Bluefin Logistics", "Cobalt Robotics", "Driftwood Media", "Ember Health", "Fernhill Foods",
    "Granite Capital", "Harbor Energy", "Ironleaf Software", "Juniper Textiles", "Kestrel Air",
)  # fmt: skip
CITIES = (
    "Lisbon", "Porto", "Madrid", "Lyon", "Rotterdam", "Gdansk", "Turin", "Valencia", "Leeds",
    "Bergen", "Ghent", "Krakow",
)  # fmt: skip
TITLES = (
    "software engineer", "accountant", "product manager", "designer", "data analyst",
    "sales director", "marketing lead", "lawyer", "operations manager", "research scientist",
)  # fmt: skip


def make_cast(rng: random.Random, people: int) -> Cast:
    """``people`` distinct people, about one organisation per two of them, twice as many
    cities as organisations (at least three), and a ring of friends."""
    names = [f"{first} {last}" for first in FIRST_NAMES for last in SURNAMES]
    chosen = rng.sample(names, people)
    firsts = {n.split()[0] for n in chosen}
    if len(firsts) < people:  # everyone goes by a distinct first name in conversation
        pool = [n for n in names if n.split()[0] not in firsts]
        chosen = _distinct_firsts(rng, chosen, pool)
    orgs = tuple(rng.sample(ORGS, max(2, min(len(ORGS), (people + 1) // 2))))
    cities = tuple(rng.sample(CITIES, max(3, min(len(CITIES), 2 * len(orgs)))))
    ring = list(chosen)
    rng.shuffle(ring)
    friends = frozenset(
        frozenset((ring[i], ring[(i + 1) % len(ring)])) for i in range(len(ring)) if len(ring) > 1
    )
    return Cast(tuple(chosen), orgs, cities, TITLES, friends)


def _distinct_firsts(rng: random.Random, chosen: list[str], pool: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for name in chosen:
        first = name.split()[0]
        if first in seen:
            options = [n for n in pool if n.split()[0] not in seen and n not in out]
            name = rng.choice(options)
            first = name.split()[0]
        seen.add(first)
        out.append(name)
    return out


def initial_state(rng: random.Random, cast: Cast) -> State:
    """Everyone employed, mostly living where their employer is; some couples."""
    state: State = {}
    for org in cast.orgs:
        state[(org, CITY)] = rng.choice(cast.cities)
    for i, person in enumerate(cast.people):
        org = cast.orgs[i % len(cast.orgs)] if i < len(cast.orgs) else rng.choice(cast.orgs)
        state[(person, EMPLOYER)] = org
        state[(person, JOB_TITLE)] = rng.choice(cast.titles)
        cast.joined[person] = (0, i)
        home = state[(org, CITY)] if rng.random() < 0.8 else rng.choice(cast.cities)
        state[(person, RESIDENCE)] = home
    single = list(cast.people)
    rng.shuffle(single)
    while len(single) >= 2 and rng.random() < 0.4:
        a, b = single.pop(), single.pop()
        state[(a, SPOUSE)], state[(b, SPOUSE)] = b, a
        state[(b, RESIDENCE)] = state[(a, RESIDENCE)]
    settle(state, cast)
    return state


@dataclass(frozen=True)
class Transition:
    """One change of the world: what happened, and to whom (the one who tells of it)."""

    kind: str
    actor: str
    detail: str = ""  # the organisation, for an organisation's change


def _move(state: State, person: str, city: str) -> None:
    """``person`` moves to ``city``, their spouse with them."""
    state[(person, RESIDENCE)] = city
    spouse = state.get((person, SPOUSE))
    if spouse is not None:
        state[(spouse, RESIDENCE)] = city


def _job_change(rng: random.Random, state: State, cast: Cast, t: int) -> Transition | None:
    person = rng.choice(cast.people)
    old = state.get((person, EMPLOYER))
    org = rng.choice([o for o in cast.orgs if o != old])
    state[(person, EMPLOYER)] = org
    titles = [title for title in cast.titles if title != state.get((person, JOB_TITLE))]
    state[(person, JOB_TITLE)] = rng.choice(titles)
    cast.joined[person] = (t, cast.people.index(person))
    if state[(org, CITY)] != state.get((person, RESIDENCE)):
        _move(state, person, state[(org, CITY)])
    return Transition("job", person, org)


def _promotion(rng: random.Random, state: State, cast: Cast, t: int) -> Transition | None:
    person = rng.choice(cast.people)
    titles = [title for title in cast.titles if title != state.get((person, JOB_TITLE))]
    state[(person, JOB_TITLE)] = rng.choice(titles)
    return Transition("title", person)


def _relocation(rng: random.Random, state: State, cast: Cast, t: int) -> Transition | None:
    person = rng.choice(cast.people)
    here = state.get((person, RESIDENCE))
    _move(state, person, rng.choice([c for c in cast.cities if c != here]))
    return Transition("move", person)


def _marriage(rng: random.Random, state: State, cast: Cast, t: int) -> Transition | None:
    single = [p for p in cast.people if (p, SPOUSE) not in state]
    if len(single) < 2:
        return None
    a, b = rng.sample(single, 2)
    state[(a, SPOUSE)], state[(b, SPOUSE)] = b, a
    state[(b, RESIDENCE)] = state[(a, RESIDENCE)]
    return Transition("marriage", a, b)


def _headquarters(rng: random.Random, state: State, cast: Cast, t: int) -> Transition | None:
    org = rng.choice(cast.orgs)
    city = rng.choice([c for c in cast.cities if c != state[(org, CITY)]])
    state[(org, CITY)] = city
    ceo = state.get((org, CHIEF_EXECUTIVE))
    if ceo is not None and state.get((ceo, RESIDENCE)) != city:
        _move(state, ceo, city)  # the chief executive goes along
    staff = employees(state, cast, org)
    return Transition("headquarters", ceo or (staff[0] if staff else ""), org)


def _new_chief(rng: random.Random, state: State, cast: Cast, t: int) -> Transition | None:
    options = [o for o in cast.orgs if len(employees(state, cast, o)) >= 2]
    if not options:
        return None
    org = rng.choice(options)
    ceo = state.get((org, CHIEF_EXECUTIVE))
    successor = rng.choice([p for p in employees(state, cast, org) if p != ceo])
    state[(org, CHIEF_EXECUTIVE)] = successor
    return Transition("chief", successor, org)


Move = Callable[[random.Random, State, Cast, int], Transition | None]
# The chain's transitions and their weights.
TRANSITIONS: tuple[tuple[Move, int], ...] = (
    (_job_change, 4),
    (_promotion, 2),
    (_relocation, 2),
    (_marriage, 1),
    (_headquarters, 1),
    (_new_chief, 1),
)


def step(rng: random.Random, state: State, cast: Cast, t: int, changes: int) -> list[Transition]:
    """Apply ``changes`` transitions to ``state`` in place (step ``t``); returns them."""
    done: list[Transition] = []
    while len(done) < changes:
        moves, weights = zip(*TRANSITIONS, strict=True)
        [move] = rng.choices(moves, weights)
        trial = dict(state)
        transition = move(rng, trial, cast, t)
        if transition is None or not transition.actor:
            continue
        settle(trial, cast)
        if trial == state:
            continue
        state.clear()
        state.update(trial)
        done.append(transition)
    return done
