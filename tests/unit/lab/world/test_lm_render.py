"""LM-rendered turns: used when they keep the facts' names and add nobody, else the template."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factstream.cli import app
from factstream.errors import LMUnavailable
from factstream.lm.base import CompletionRequest
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.prompts.render_turn import V1
from factstream_lab.world import commands
from factstream_lab.world.generate import World, WorldConfig, generate_world, write_world
from factstream_lab.world.lm_render import RenderCounts, acceptable, prompt_grams, render_world

CONFIG = WorldConfig(seed=11, people=6, steps=2)


def _turn(request: CompletionRequest) -> str:
    found = re.search(r"<turn>\n(.*?)\n</turn>", request.messages[-1].content, flags=re.S)
    assert found is not None
    return found[1]


def _answer(text: str) -> str:
    return json.dumps({"text": text})


def _statement_turns(world: World) -> int:
    return sum(len(set(c.turn_of.values())) for c in world.conversations)


def _render(
    world: World, reply: Callable[[CompletionRequest], str] | Exception
) -> tuple[World, RenderCounts, ScriptedLM]:
    lm = ScriptedLM([reply] * 1000)
    rendered, counts = asyncio.run(render_world(world, TaskRunner(lm, attempts=2)))
    return rendered, counts, lm


def _texts(world: World) -> list[str]:
    return [d.text for c in world.conversations for d in c.chunks]


def test_a_good_rendering_is_used_and_the_rest_stays() -> None:
    world = generate_world(CONFIG)
    rendered, counts, lm = _render(world, lambda r: _answer(f"Guess what. {_turn(r)}"))
    assert counts == RenderCounts(rendered=_statement_turns(world))
    assert len(lm.requests) == counts.total > 0
    assert all(r.prompt == "render_turn.v1" for r in lm.requests)
    said = "\n".join(_texts(rendered))
    assert said.count("Guess what. ") == counts.rendered
    # Only the turns that state facts change; the triples and questions do not.
    assert rendered.triples == world.triples and rendered.questions == world.questions
    before = [t for c in world.conversations for d in c.chunks for t in d.turns or ()]
    after = [t for c in rendered.conversations for d in c.chunks for t in d.turns or ()]
    changed = [i for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    assert len(changed) == counts.rendered
    assert [len(c.chunks) for c in rendered.conversations] == [
        len(c.chunks) for c in world.conversations
    ]


def test_a_rendering_that_drops_a_name_keeps_the_template() -> None:
    world = generate_world(CONFIG)
    rendered, counts, lm = _render(world, lambda _r: _answer("I have some news for you."))
    assert counts == RenderCounts(refused=_statement_turns(world))
    assert len(lm.requests) == 2 * counts.total  # the runner asked again, once
    assert "That answer is invalid" in lm.requests[1].messages[-1].content
    assert _texts(rendered) == _texts(world)


def test_a_rendering_that_adds_a_person_keeps_the_template() -> None:
    world = generate_world(CONFIG)

    def add_someone(request: CompletionRequest) -> str:
        shown = request.messages[-1].content
        stranger = next(p for p in world.cast.people if p.split()[0] not in shown)
        return _answer(f"{_turn(request)} {stranger} told me.")

    rendered, counts, _ = _render(world, add_someone)
    assert counts == RenderCounts(refused=_statement_turns(world))
    assert _texts(rendered) == _texts(world)


def test_an_lm_failure_keeps_the_template_and_is_counted(tmp_path: Path) -> None:
    world = generate_world(CONFIG)
    rendered, counts, _ = _render(world, LMUnavailable("http://lm", "down"))
    assert counts == RenderCounts(failed=_statement_turns(world))
    assert counts.kept_template == counts.total
    a = write_world(world, tmp_path / "a")
    b = write_world(rendered, tmp_path / "b")
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("I moved to lisbon, Ben!", None),  # the listener may be addressed
        ("I moved.", "lost_name"),
        ("I moved to Lisbon with Cara.", "added_name"),  # another person
        ("I moved to Lisbon, near Acme.", "added_name"),  # another organisation
        ("Ana here: I moved to Lisbon.", "added_name"),  # the speaker named: not the template
        ("I'm Ben Ode and I moved to Lisbon.", "added_name"),  # the listener's full name
        ("I moved to Lisbon for Zeta Corp.", None),  # the template named it
        ("Ana Lima | residence | Lisbon", "added_name"),
        ("Lisbon | residence", "echo"),
        ("The speaker says the turn: Lisbon.", "echo"),
    ],
)
def test_the_check(text: str, why: str | None) -> None:
    names = (
        "Ana Lima",
        "Ana",
        "Ben Ode",
        "Ben",
        "Cara Moss",
        "Cara",
        "Acme",
        "Zeta Corp",
        "Lisbon",
    )
    template = "I moved to Lisbon for Zeta Corp."
    echo = prompt_grams(V1)
    assert ("the", "speaker", "says", "the") in echo
    assert acceptable(text, template, ("Lisbon",), names, "Ben Ode", echo) == why


def test_the_command_renders_with_the_lm_only_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[World] = []

    async def fake(world: World) -> tuple[World, RenderCounts]:
        calls.append(world)
        return world, RenderCounts(rendered=3, refused=2, failed=1)

    monkeypatch.setattr(commands, "_render_with_lm", fake)
    args = ["world", "generate", "--seed", "3", "--people", "3", "--steps", "1"]
    plain = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "a")])
    assert plain.exit_code == 0 and calls == []
    result = CliRunner().invoke(app, [*args, "--render", "lm", "--out", str(tmp_path / "b")])
    assert result.exit_code == 0, result.output
    assert len(calls) == 1
    assert "3 rendered by the LM, 3 kept as templates (2 refused by the check, 1 LM failures)" in (
        " ".join(result.output.split())
    )
