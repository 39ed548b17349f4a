"""Turns that state facts, said by the LM in the speaker's own words, checked; else the template.

Opt-in (``factstream world generate --render lm``). Each turn of a conversation that states
facts goes to the ``render_turn`` prompt with its speaker, listener, the facts and the names
its template wrote (the facts' people, places, organisations, titles). The answer is used
only when it still contains every one of those names, names no other person, organisation
or city of the world (the listener may be addressed by first name), and echoes neither the
prompt's own words nor its fact lines; otherwise, or when the LM fails, the template's text
stays, counted. The turns that state nothing (greetings,
reactions, farewells) stay templates. The triples and questions do not change: the
checked turn names everything its template named, so each triple's chunk still states it.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from dataclasses import dataclass, replace
from functools import cache

from factstream.errors import LMError, LMOutputInvalid
from factstream.lm.tasks.runner import TaskRunner
from factstream.prompts.models import Prompt
from factstream.prompts.render_turn import V1, RenderedTurn, RenderTurnContext, missing
from factstream.topics.records import Turn, render_turns
from factstream_lab.world.generate import World
from factstream_lab.world.talk import Conversation, Statement, first_name

__all__ = [
    "RenderCounts",
    "acceptable",
    "kept_names",
    "prompt_grams",
    "render_world",
    "world_names",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RenderCounts:
    """Turns that state facts: said by the LM, or kept as the template (refused or failed).

    Attributes:
        rendered: The LM's turn passed the check and was used.
        refused: The LM answered, but the turn lost a name (still, after the runner's
            retries) or added one: template kept.
        failed: The LM failed (unavailable, server error): template kept.
    """

    rendered: int = 0
    refused: int = 0
    failed: int = 0

    @property
    def kept_template(self) -> int:
        return self.refused + self.failed

    @property
    def total(self) -> int:
        return self.rendered + self.kept_template


def _fact(statement: Statement) -> str:
    return f"{statement.subject} | {statement.relation} | {statement.object}"


def kept_names(template: str, statements: list[Statement]) -> tuple[str, ...]:
    """The facts' names the template wrote (a first-person subject is "I", not a name)."""
    values = dict.fromkeys(v for st in statements for v in (st.subject, st.object))
    return tuple(v for v in values if not missing(template, (v,)))


def world_names(world: World) -> tuple[str, ...]:
    """Every name of the world: people (full and first names), organisations, cities."""
    cast = world.cast
    people = [*cast.people, *(first_name(p) for p in cast.people)]
    return tuple(dict.fromkeys([*people, *cast.orgs, *cast.cities]))


_ECHO_WORDS = 4  # a run this long of the prompt's own words is an echo of it
_PROBE = "zqx"


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower())


def _grams(text: str) -> set[tuple[str, ...]]:
    words = _words(text)
    return {tuple(words[i : i + _ECHO_WORDS]) for i in range(len(words) - _ECHO_WORDS + 1)}


@cache
def prompt_grams(prompt: Prompt[RenderTurnContext, RenderedTurn]) -> frozenset[tuple[str, ...]]:
    """The runs of the prompt's own words (its data probed with a word no turn has)."""
    ctx = RenderTurnContext(
        speaker=_PROBE, listener=_PROBE, turn=_PROBE, facts=(_PROBE,), keep=(_PROBE,)
    )
    grams = set().union(*(_grams(m.content) for m in prompt.messages(ctx)))
    return frozenset(g for g in grams if _PROBE not in g)


def acceptable(
    text: str,
    template: str,
    keep: tuple[str, ...],
    names: tuple[str, ...],
    listener: str,
    echo: frozenset[tuple[str, ...]] = frozenset(),
) -> str | None:
    """Why ``text`` may not replace ``template``, or None when it may.

    It must write every name of ``keep``; no name of ``names`` the template did not write,
    except the listener's first name (addressed); no run of the prompt's own words
    (``echo``) the template lacks; and no fact line (``subject | relation | object``).
    """
    if missing(text, keep):
        return "lost_name"
    added = [n for n in names if n != first_name(listener) and not missing(text, (n,))]
    if any(missing(template, (n,)) for n in added):
        return "added_name"
    if "|" in text or (_grams(text) - _grams(template)) & echo:
        return "echo"
    return None


async def _render(
    runner: TaskRunner,
    prompt: Prompt[RenderTurnContext, RenderedTurn],
    ctx: RenderTurnContext,
) -> RenderedTurn | str:
    """The LM's turn, or why there is none: ``refused`` (no valid answer), ``failed``."""
    try:
        return (await runner.run(prompt, ctx)).value
    except LMOutputInvalid as exc:
        log.info("render_turn answers invalid, template kept: %s", exc)
        return "refused"
    except LMError as exc:
        log.info("render_turn failed, template kept: %s", exc)
        return "failed"


async def _conversation(
    conversation: Conversation,
    names: tuple[str, ...],
    runner: TaskRunner,
    prompt: Prompt[RenderTurnContext, RenderedTurn],
    counts: dict[str, int],
) -> Conversation:
    by_turn: dict[int, list[Statement]] = defaultdict(list)
    for statement, index in conversation.turn_of.items():
        by_turn[index].append(statement)
    turns = [turn for chunk in conversation.chunks for turn in chunk.turns or ()]
    talkers = (conversation.teller, conversation.listener)
    echo = prompt_grams(prompt)
    for index in sorted(by_turn):
        turn = turns[index]
        listener = next(t for t in talkers if t != turn.speaker)
        keep = kept_names(turn.text, by_turn[index])
        facts = tuple(_fact(st) for st in by_turn[index])
        ctx = RenderTurnContext(
            speaker=turn.speaker, listener=listener, turn=turn.text, facts=facts, keep=keep
        )
        answer = await _render(runner, prompt, ctx)
        if isinstance(answer, str):
            counts[answer] += 1
        elif acceptable(answer.text.strip(), turn.text, keep, names, listener, echo) is None:
            counts["rendered"] += 1
            turns[index] = Turn(speaker=turn.speaker, text=answer.text.strip())
        else:
            counts["refused"] += 1
    chunks, start = [], 0
    for chunk in conversation.chunks:
        mine = turns[start : start + len(chunk.turns or ())]
        start += len(mine)
        chunks.append(chunk.model_copy(update={"turns": mine, "text": render_turns(mine)}))
    return replace(conversation, chunks=tuple(chunks))


async def render_world(
    world: World,
    runner: TaskRunner,
    prompt: Prompt[RenderTurnContext, RenderedTurn] = V1,
) -> tuple[World, RenderCounts]:
    """``world`` with its fact-stating turns said by the LM where they pass the check.

    One turn at a time, in order (a local server answers one request at a time anyway).
    """
    names = world_names(world)
    counts = {"rendered": 0, "refused": 0, "failed": 0}
    conversations = [
        await _conversation(c, names, runner, prompt, counts) for c in world.conversations
    ]
    return replace(world, conversations=tuple(conversations)), RenderCounts(**counts)
