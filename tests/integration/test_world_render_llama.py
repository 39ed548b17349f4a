"""A tiny world's fact-stating turns through the real llama.cpp server (SmolLM2).

Whatever the small model says, every such turn in the written files is either the LM's,
passing the check (every name its template wrote, no one else of the world), or the
template's own text; the counts add up; and at least one turn is the LM's (a run that kept
every template tested only the fallback). The counts are printed (``-s``).
"""

from __future__ import annotations

import json
from pathlib import Path

from prometheus_client import CollectorRegistry

from factstream.config import Settings
from factstream.lm.openai_compat import OpenAICompatLM
from factstream.lm.tasks.runner import TaskRunner
from factstream.metrics import LMMetrics
from factstream.prompts.render_turn import V1
from factstream_lab.world.generate import WorldConfig, generate_world, write_world
from factstream_lab.world.lm_render import (
    acceptable,
    kept_names,
    prompt_grams,
    render_world,
    world_names,
)
from factstream_lab.world.talk import Statement


async def test_every_fact_turn_passed_the_check_or_is_the_template(
    lm_settings: Settings, tmp_path: Path
) -> None:
    world = generate_world(WorldConfig(seed=3, people=2, steps=1, changes=1))
    metrics = LMMetrics.create(CollectorRegistry())
    lm = OpenAICompatLM(lm_settings.lm, metrics)  # no response cache: the LM's own answers
    try:
        # One attempt per turn: the shared server is slow, and a retry rarely mends a name.
        runner = TaskRunner(lm, metrics, attempts=1)
        rendered, counts = await render_world(world, runner)
    finally:
        await lm.aclose()
    print(f"render_turn on {lm.model}: {counts}")
    paths = write_world(rendered, tmp_path)
    assert [p.name for p in paths] == [
        "documents.jsonl",
        "triples.jsonl",
        "questions.jsonl",
        "README.md",
    ]
    lines = [json.loads(line) for line in paths[0].read_text().splitlines()]
    written = [turn["text"] for line in lines for turn in line["turns"]]
    template = [t.text for c in world.conversations for d in c.chunks for t in d.turns or ()]
    assert len(written) == len(template)
    names, echo = world_names(world), prompt_grams(V1)
    speakers = [t.speaker for c in world.conversations for d in c.chunks for t in d.turns or ()]
    offset, changed = 0, 0
    for before in world.conversations:
        by_turn: dict[int, list[Statement]] = {}
        for statement, index in before.turn_of.items():
            by_turn.setdefault(index, []).append(statement)
        size = sum(len(d.turns or ()) for d in before.chunks)
        for index in range(size):
            old, new = template[offset + index], written[offset + index]
            if index not in by_turn:
                assert new == old  # turns stating nothing stay templates
            elif new != old:
                changed += 1
                print(f"  {old!r} -> {new!r}")
                keep = kept_names(old, by_turn[index])
                listener = next(
                    p for p in (before.teller, before.listener) if p != speakers[offset + index]
                )
                assert acceptable(new, old, keep, names, listener, echo) is None, new
        offset += size
    assert changed <= counts.rendered  # a rendering may equal its template
    # A run that rendered nothing tested only the fallback: it fails.
    assert changed > 0, f"no turn was rendered by the LM: {counts}"
    assert counts.total == sum(len(set(c.turn_of.values())) for c in world.conversations)
    assert counts.rendered + counts.refused + counts.failed == counts.total
    plain = write_world(world, tmp_path / "templates")
    assert [p.read_bytes() for p in plain[1:3]] == [p.read_bytes() for p in paths[1:3]]
