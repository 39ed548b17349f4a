"""`factstream world generate`: a seeded world, its conversations, triples and questions.

The chain (:mod:`factstream_lab.world.chain`) runs ``steps`` steps of ``changes`` transitions
each, a transition at a time of its own; every change of the state is told in a
conversation soon after it (the first state in one conversation per person), chunked by
turns into documents of kind ``conversation``. The triples are the states' relations with
their valid intervals, each naming the chunk that states it; the questions are read off
the triples (:mod:`factstream_lab.world.questions`). Everything follows from the seed and the
knobs: the same ones write the same bytes.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from factstream.topics.records import Document, Turn, render_turns
from factstream_lab.world.chain import initial_state, make_cast, step
from factstream_lab.world.model import (
    CHIEF_EXECUTIVE,
    CITY,
    EMPLOYER,
    JOB_TITLE,
    MANAGER,
    RESIDENCE,
    SPOUSE,
    Cast,
    State,
    problems,
)
from factstream_lab.world.questions import Timeline, WorldTriple, questions_for
from factstream_lab.world.talk import Conversation, Statement, render_conversation

__all__ = ["Conversation", "World", "WorldConfig", "generate_world", "write_world"]

START = datetime(2024, 1, 1, 9, 0, tzinfo=UTC)
_PERSON_ORDER = (EMPLOYER, JOB_TITLE, RESIDENCE, SPOUSE, MANAGER)


@dataclass(frozen=True)
class WorldConfig:
    """The generator's knobs (docs/world.md)."""

    seed: int = 0
    people: int = 5
    steps: int = 4
    changes: int = 2  # transitions per step
    step_days: int = 30
    turns_per_chunk: int = 4
    start: datetime = START

    def __post_init__(self) -> None:
        if not 2 <= self.people <= 25:
            raise ValueError("people: 2 to 25 (everyone has a distinct first name)")
        if self.steps < 0 or not 1 <= self.changes <= 8 or self.step_days < 1:
            raise ValueError("steps >= 0, changes 1 to 8, step_days >= 1")
        if self.turns_per_chunk < 1:
            raise ValueError("turns_per_chunk >= 1")

    @property
    def namespace(self) -> str:
        return f"world-{self.seed}"


@dataclass(frozen=True)
class World:
    """A generated world: the cast, the states at each event, conversations, triples, questions."""

    config: WorldConfig
    cast: Cast
    states: tuple[tuple[datetime, State], ...]
    conversations: tuple[Conversation, ...]
    triples: tuple[WorldTriple, ...]
    questions: tuple[dict[str, Any], ...]


def _stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _listener(
    rng: random.Random, cast: Cast, state: State, teller: str, said: Sequence[Statement]
) -> str:
    involved = {teller} | {s.subject for s in said} | {s.object for s in said}
    for pool in (cast.knows(state, teller), list(cast.people)):
        options = [p for p in pool if p not in involved]
        if options:
            return rng.choice(options)
    return rng.choice([p for p in cast.people if p != teller])


def _conversation(
    rng: random.Random,
    cfg: WorldConfig,
    number: int,
    event: datetime,
    begins: datetime,
    teller: str,
    listener: str,
    statements: Sequence[Statement],
) -> Conversation:
    talk = render_conversation(rng, teller, listener, statements)
    cid = f"w{cfg.seed}-c{number:03d}"
    size = cfg.turns_per_chunk
    count = -(-len(talk.turns) // size)
    chunks = []
    for j in range(count):
        turns = [Turn(speaker=s, text=t) for s, t in talk.turns[j * size : (j + 1) * size]]
        chunks.append(
            Document(
                id=f"{cid}-{j + 1}",
                namespace=cfg.namespace,
                kind="conversation",
                timestamp=begins + timedelta(minutes=j),
                turns=turns,
                text=render_turns(turns),
                metadata={
                    "conversation": cid,
                    "chunk": f"{j + 1}/{count}",
                    "participants": f"{teller}; {listener}",
                },
            )
        )
    stated = {st: chunks[turn // size].id for st, turn in talk.stated_in.items()}
    return Conversation(
        cid, event, teller, listener, tuple(statements), tuple(chunks), stated, talk.stated_in
    )


def _introductions(
    rng: random.Random, cfg: WorldConfig, cast: Cast, state: State
) -> list[Conversation]:
    """The first state, told: one conversation per person about themselves (and the
    organisation they lead); organisations nobody leads go to the first conversation."""
    told: set[tuple[str, str]] = set()
    plans: list[tuple[str, list[Statement]]] = []
    for person in cast.people:
        said = []
        for relation in _PERSON_ORDER:
            key = (person, relation)
            if key in state and key not in told:
                said.append(Statement(person, relation, state[key]))
                told.add(key)
                if relation == SPOUSE:  # the couple's other triple, said in the same breath
                    said.append(Statement(state[key], SPOUSE, person))
                    told.add((state[key], SPOUSE))
        for org in cast.orgs:
            if state.get((org, CHIEF_EXECUTIVE)) == person:
                said += [Statement(org, CITY, state[(org, CITY)])]
                said += [Statement(org, CHIEF_EXECUTIVE, person)]
                told |= {(org, CITY), (org, CHIEF_EXECUTIVE)}
        plans.append((person, said))
    orphans = [Statement(o, CITY, state[(o, CITY)]) for o in cast.orgs if (o, CITY) not in told]
    plans[0][1].extend(orphans)
    conversations = []
    for i, (person, said) in enumerate(plans):
        listener = _listener(rng, cast, state, person, said)
        begins = cfg.start + timedelta(minutes=20 * (i + 1))
        conversations.append(
            _conversation(rng, cfg, i + 1, cfg.start, begins, person, listener, said)
        )
    return conversations


def _changes(before: State, after: State, teller: str) -> list[Statement]:
    """What changed, the teller's own news first."""
    changed = [Statement(s, r, o) for (s, r), o in after.items() if before.get((s, r)) != o]
    return sorted(changed, key=lambda st: st.subject != teller)


def generate_world(cfg: WorldConfig) -> World:
    """Run the chain and render it (pure: the seed decides everything)."""
    rng = random.Random(cfg.seed)  # noqa: S311 - a reproducible world, not a secret
    cast = make_cast(rng, cfg.people)
    state = initial_state(rng, cast)
    states: list[tuple[datetime, State]] = [(cfg.start, dict(state))]
    conversations = _introductions(rng, cfg, cast, state)
    for t in range(1, cfg.steps + 1):
        base = cfg.start + timedelta(days=t * cfg.step_days)
        for k in range(cfg.changes):
            before = dict(state)
            [transition] = step(rng, state, cast, t, 1)
            broken = problems(state, cast)
            if broken:  # the chain's own rules: a bug, never data
                raise AssertionError(f"step {t}: {'; '.join(broken)}")
            when = base + timedelta(hours=2 * k)
            states.append((when, dict(state)))
            said = _changes(before, state, transition.actor)
            listener = _listener(rng, cast, state, transition.actor, said)
            number = len(conversations) + 1
            begins = when + timedelta(minutes=10)
            conversations.append(
                _conversation(rng, cfg, number, when, begins, transition.actor, listener, said)
            )
    triples = _triples(states, conversations)
    timeline = Timeline.of(states, conversations)
    questions = questions_for(triples, timeline, cast)
    return World(cfg, cast, tuple(states), tuple(conversations), tuple(triples), tuple(questions))


def _triples(
    states: Sequence[tuple[datetime, State]], conversations: Sequence[Conversation]
) -> list[WorldTriple]:
    """Each (subject, relation)'s values over the events, with valid intervals and the chunk
    that states each."""
    stated: dict[tuple[datetime, Statement], str] = {
        (c.event, st): chunk for c in conversations for st, chunk in c.stated_in.items()
    }
    keys = list(dict.fromkeys(key for _, state in states for key in state))
    triples = []
    for subject, relation in keys:
        current: tuple[str, datetime] | None = None
        for when, state in [*states, (None, {})]:
            value = state.get((subject, relation))
            if current is not None and value != current[0]:
                triples.append(_triple(subject, relation, current, when, stated))
                current = None
            if value is not None and current is None and when is not None:
                current = (value, when)
    return sorted(triples, key=lambda t: (t.valid_from, t.document_id, t.subject, t.relation))


def _triple(
    subject: str,
    relation: str,
    current: tuple[str, datetime],
    until: datetime | None,
    stated: dict[tuple[datetime, Statement], str],
) -> WorldTriple:
    value, since = current
    document = stated[(since, Statement(subject, relation, value))]
    return WorldTriple(subject, relation, value, since, until, document)


def _document_line(doc: Document) -> dict[str, Any]:
    return {
        "id": doc.id,
        "namespace": doc.namespace,
        "kind": doc.kind.value,
        "timestamp": _stamp(doc.timestamp),
        "turns": [{"speaker": t.speaker, "text": t.text} for t in doc.turns or ()],
        "text": doc.text,
        "metadata": doc.metadata,
    }


def _lines(rows: Sequence[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def write_world(world: World, out: Path) -> list[Path]:
    """Write documents.jsonl, triples.jsonl, questions.jsonl and README.md into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    documents = [_document_line(d) for c in world.conversations for d in c.chunks]
    files = {
        "documents.jsonl": _lines(documents),
        "triples.jsonl": _lines([t.to_json() for t in world.triples]),
        "questions.jsonl": _lines(list(world.questions)),
        "README.md": _readme(world, len(documents)),
    }
    paths = []
    for name, text in files.items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def _readme(world: World, documents: int) -> str:
    cfg = world.config
    hops = {n: sum(q["hops"] == n for q in world.questions) for n in (1, 2, 3)}
    return (
        f"# A generated world (seed {cfg.seed})\n\n"
        f"`factstream world generate --seed {cfg.seed} --people {cfg.people} "
        f"--steps {cfg.steps} --changes {cfg.changes} --step-days {cfg.step_days} "
        f"--turns-per-chunk {cfg.turns_per_chunk}`\n\n"
        f"{len(world.cast.people)} people, {len(world.cast.orgs)} organisations, "
        f"{len(world.cast.cities)} cities; {len(world.conversations)} conversations in "
        f"{documents} chunks (documents.jsonl), {len(world.triples)} triples (triples.jsonl), "
        f"{len(world.questions)} questions (questions.jsonl: {hops[1]} single-hop, "
        f"{hops[2]} 2-hop, {hops[3]} 3-hop).\n\n"
        "The files have CLARK-News' format; factstream's docs/world.md describes them.\n"
    )
