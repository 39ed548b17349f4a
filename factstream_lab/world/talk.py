"""Conversations that state facts: templates with variety, first person where the speaker is
the subject, third person for others.

A conversation is between the one who tells (the subject of most of what is said) and
someone they know. Every statement is one triple true at the conversation's time, said in
one turn; the turns around it greet, react, ask and take leave, and state nothing.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from factstream.topics.records import Document
from factstream_lab.world.model import (
    CHIEF_EXECUTIVE,
    CITY,
    EMPLOYER,
    JOB_TITLE,
    MANAGER,
    RESIDENCE,
    SPOUSE,
)

__all__ = ["Conversation", "Statement", "Talk", "first_name", "render_conversation"]


@dataclass(frozen=True)
class Statement:
    """One triple a conversation states."""

    subject: str
    relation: str
    object: str


@dataclass(frozen=True)
class Conversation:
    """One conversation: when, who, what it states, and its chunks."""

    id: str
    event: datetime  # the time of the change it tells (the first state: the start)
    teller: str
    listener: str
    statements: tuple[Statement, ...]
    chunks: tuple[Document, ...]
    stated_in: dict[Statement, str] = field(default_factory=dict)  # statement -> chunk id
    turn_of: dict[Statement, int] = field(default_factory=dict)  # statement -> turn index


@dataclass(frozen=True)
class Talk:
    """A rendered conversation: turns (speaker, text) and the turn that states each statement."""

    turns: tuple[tuple[str, str], ...]
    stated_in: dict[Statement, int]


def first_name(name: str) -> str:
    """How people address each other: by first name."""
    return name.split()[0]


def _a(noun: str) -> str:
    return f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun}"


# {s}: the subject, {o}: the object, {a}: the object with its article.
_FIRST: dict[str, tuple[str, ...]] = {
    EMPLOYER: (
        "I work at {o} now.",
        "I've joined {o}.",
        "I started a new job at {o}.",
        "These days I'm with {o}.",
        "I'm working for {o}.",
    ),
    JOB_TITLE: (
        "I'm {a} now.",
        "I work as {a}.",
        "They made me {a}.",
        "My job title is {o}.",
    ),
    RESIDENCE: (
        "I live in {o} now.",
        "I moved to {o}.",
        "I'm living in {o} these days.",
        "Home is {o} for me now.",
    ),
    SPOUSE: ("I married {o}.", "{o} and I got married.", "I'm married to {o}."),
    MANAGER: ("My manager is {o}.", "I report to {o} now.", "{o} is my boss."),
}
_THIRD: dict[str, tuple[str, ...]] = {
    EMPLOYER: ("{s} works at {o} now.", "{s} joined {o}.", "{s} is at {o} these days."),
    JOB_TITLE: ("{s} is {a} now.", "{s} works as {a}.", "{s}'s job title is {o}."),
    RESIDENCE: ("{s} lives in {o}.", "{s} moved to {o}.", "{s} is living in {o} now."),
    SPOUSE: ("{s} is married to {o}.", "{s} married {o}."),
    MANAGER: ("{s} reports to {o}.", "{s}'s manager is {o}.", "{o} manages {s} now."),
    CITY: (
        "{s} has its headquarters in {o}.",
        "{s} moved its headquarters to {o}.",
        "{s} is based in {o} now.",
    ),
    CHIEF_EXECUTIVE: (
        "{o} is the chief executive of {s}.",
        "{s} named {o} chief executive.",
        "{o} runs {s} as chief executive now.",
    ),
}
# The speaker is the object: "I manage Ben Okafor", "I'm the chief executive of Acme".
_AS_OBJECT: dict[str, tuple[str, ...]] = {
    MANAGER: ("I manage {s} now.", "{s} reports to me."),
    CHIEF_EXECUTIVE: (
        "I'm the chief executive of {s} now.",
        "{s} made me chief executive.",
    ),
}
_GREETINGS = (
    "Hi {a}! How are things?",
    "{a}, good to see you. What's new?",
    "Hey {a}, long time no see. How have you been?",
    "Morning {a}! Anything new with you?",
    "{a}! I was hoping to run into you. How's life?",
)
_REPLIES = (
    "Hi {b}! Quite a lot, actually.",
    "Good to see you too, {b}. Busy times.",
    "Hey {b}. Plenty of news.",
    "Not bad at all, {b}. Let me tell you.",
)
_REACTIONS = (
    "Really? Tell me more.",
    "Congratulations!",
    "Wow, that's a big change.",
    "Good for you.",
    "I had no idea.",
    "How is that going?",
    "That's great news.",
    "Oh, interesting.",
)
_SMALL_TALK = (
    "The weather has been strange lately.",
    "I've been meaning to call you for weeks.",
    "The trains were late again this morning.",
    "Did you see the match on Sunday?",
)
_FAREWELLS = (
    ("Let's catch up again soon.", "Definitely. Take care, {b}."),
    ("I have to run, but this was nice.", "Same here. Bye, {b}!"),
    ("Say hello to everyone for me.", "I will. See you, {b}."),
)


_LINKS = ("Also,", "And", "Oh, and")
_COMMON_FIRST = frozenset(("My", "They", "These", "Home"))


def _lower_first(sentence: str) -> str:
    """The sentence to follow a link word: a common first word in lower case, names kept."""
    word = sentence.split()[0]
    return sentence[0].lower() + sentence[1:] if word in _COMMON_FIRST else sentence


def _sentence(rng: random.Random, statement: Statement, speaker: str) -> str:
    s, relation, o = statement.subject, statement.relation, statement.object
    if o == speaker and relation in _AS_OBJECT:
        template = rng.choice(_AS_OBJECT[relation])
    elif s == speaker and relation in _FIRST:
        template = rng.choice(_FIRST[relation])
    else:
        template = rng.choice(_THIRD[relation])
    text = template.format(s=s, o=o, a=_a(o))
    return text[0].upper() + text[1:]


def _grouped(statements: Sequence[Statement]) -> list[list[Statement]]:
    """Statements said together: a marriage's two spouse triples make one sentence."""
    groups: list[list[Statement]] = []
    pending = list(statements)
    while pending:
        first = pending.pop(0)
        group = [first]
        if first.relation == SPOUSE:
            mirror = Statement(first.object, SPOUSE, first.subject)
            if mirror in pending:
                pending.remove(mirror)
                group.append(mirror)
        groups.append(group)
    return groups


def render_conversation(
    rng: random.Random, teller: str, listener: str, statements: Sequence[Statement]
) -> Talk:
    """A conversation in which ``teller`` (sometimes ``listener``) states ``statements``."""
    a, b = first_name(teller), first_name(listener)
    turns: list[tuple[str, str]] = [(listener, rng.choice(_GREETINGS).format(a=a))]
    turns.append((teller, rng.choice(_REPLIES).format(b=b)))
    stated: dict[Statement, int] = {}
    groups = _grouped(statements)
    for i, group in enumerate(groups):
        # Someone else's news may come from the listener ("Did you hear? ...").
        others = all(teller not in (st.subject, st.object) for st in group)
        others = others and all(listener not in (st.subject, st.object) for st in group)
        speaker = listener if others and rng.random() < 0.4 else teller
        sentence = _sentence(rng, group[0], speaker)
        if speaker == listener:
            sentence = f"Did you hear? {sentence}"
        elif i > 0 and rng.random() < 0.3:
            sentence = f"{rng.choice(_LINKS)} {_lower_first(sentence)}"
        for st in group:
            stated[st] = len(turns)
        turns.append((speaker, sentence))
        if rng.random() < 0.6:
            turns.append((teller if speaker == listener else listener, rng.choice(_REACTIONS)))
        if rng.random() < 0.1:
            turns.append((listener, rng.choice(_SMALL_TALK)))
    bye, reply = rng.choice(_FAREWELLS)
    turns += [(listener, bye), (teller, reply.format(b=b))]
    return Talk(tuple(turns), stated)
