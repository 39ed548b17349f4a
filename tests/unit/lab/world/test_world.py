"""Generated worlds: reproducible, consistent at every step, truthful, answerable."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from factstream.cli import app
from factstream.topics.records import Document
from factstream_lab.eval.datasets import load_clark
from factstream_lab.eval.protocol import load_questions, schedule
from factstream_lab.world.generate import World, WorldConfig, generate_world, write_world
from factstream_lab.world.model import CHIEF_EXECUTIVE, EMPLOYER, MANAGER, SPOUSE

worlds = st.builds(
    WorldConfig,
    seed=st.integers(0, 10_000),
    people=st.integers(2, 12),
    steps=st.integers(0, 6),
    changes=st.integers(1, 3),
)
few = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _read(folder: Path, name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / name).read_text().splitlines()]


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text)


def test_the_same_seed_writes_the_same_bytes(tmp_path: Path) -> None:
    config = WorldConfig(seed=7, people=6, steps=5)
    first = write_world(generate_world(config), tmp_path / "a")
    second = write_world(generate_world(config), tmp_path / "b")
    assert [p.read_bytes() for p in first] == [p.read_bytes() for p in second]
    other = write_world(generate_world(WorldConfig(seed=8, people=6, steps=5)), tmp_path / "c")
    assert first[0].read_bytes() != other[0].read_bytes()


def test_the_command_writes_the_files(tmp_path: Path) -> None:
    args = ["world", "generate", "--seed", "3", "--people", "4", "--steps", "2"]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["README.md", "documents.jsonl", "questions.jsonl", "triples.jsonl"]
    assert "--seed 3 --people 4 --steps 2" in (tmp_path / "README.md").read_text()


def _check_state(state: dict[tuple[str, str], str], world: World) -> None:
    for person in world.cast.people:
        spouse = state.get((person, SPOUSE))
        if spouse is not None:
            assert spouse != person and state[(spouse, SPOUSE)] == person
        manager = state.get((person, MANAGER))
        if manager is not None:
            assert manager != person
            assert state[(manager, EMPLOYER)] == state[(person, EMPLOYER)]
    for org in world.cast.orgs:
        ceo = state.get((org, CHIEF_EXECUTIVE))
        assert ceo is None or state[(ceo, EMPLOYER)] == org


@few
@given(worlds)
def test_the_world_keeps_its_rules_at_every_step(config: WorldConfig) -> None:
    world = generate_world(config)
    assert len(world.states) == 1 + config.steps * config.changes
    for _, state in world.states:
        _check_state(state, world)
    # One value per (subject, relation) at a time: the triples' intervals never overlap.
    chains: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for t in world.triples:
        chains[(t.subject, t.relation)].append(t)
    for chain in chains.values():
        chain.sort(key=lambda t: t.valid_from)
        for old, new in zip(chain, chain[1:], strict=False):
            assert old.valid_to is not None and old.valid_to <= new.valid_from


@few
@given(worlds)
def test_conversations_state_only_what_is_true_then(config: WorldConfig) -> None:
    world = generate_world(config)
    assert world.conversations
    stated = 0
    for conversation in world.conversations:
        chunks = {d.id: d for d in conversation.chunks}
        times = [d.timestamp for d in conversation.chunks]
        assert times == sorted(times) and len({d.namespace for d in chunks.values()}) == 1
        for statement, chunk_id in conversation.stated_in.items():
            chunk = chunks[chunk_id]
            holds = [
                t
                for t in world.triples
                if (t.subject, t.relation, t.object)
                == (statement.subject, statement.relation, statement.object)
                and t.holds_at(chunk.timestamp)
            ]
            assert holds, f"{statement} is not true at {chunk.timestamp}"
            assert statement.object in chunk.text or chunk.speakers.count(statement.object)
            stated += 1
        assert set(conversation.stated_in) == set(conversation.statements)
    assert stated > 0


@few
@given(worlds)
def test_every_triple_is_stated_while_it_holds(config: WorldConfig) -> None:
    world = generate_world(config)
    documents = {d.id: d for c in world.conversations for d in c.chunks}
    for triple in world.triples:
        assert triple.holds_at(documents[triple.document_id].timestamp)


def _follow(triples: list[dict[str, Any]], subject: str, path: list[str], when: datetime) -> Any:
    node = subject
    for relation in path:
        found = [
            t["object"]
            for t in triples
            if (t["subject"], t["relation"]) == (node, relation)
            and _time(t["valid_from"]) <= when
            and (t["valid_to"] is None or when < _time(t["valid_to"]))
        ]
        if len(found) != 1:
            return None
        node = found[0]
    return node


@few
@given(worlds)
def test_every_answer_follows_from_the_triples(tmp_path_factory: Any, config: WorldConfig) -> None:
    folder = tmp_path_factory.mktemp("world")
    write_world(generate_world(config), folder)
    triples, questions = _read(folder, "triples.jsonl"), _read(folder, "questions.jsonl")
    for q in questions:
        assert len(q["choices"]) >= 2 and 1 <= q["hops"] <= 3
        assert sorted({a["answer"] for a in q["answers"]}) == q["choices"]
        for answer in q["answers"]:
            when = _time(answer["known_from"])
            assert (
                _follow(triples, q["subject"], q["relation"].split(" / "), when) == answer["answer"]
            )
            _check_chain(triples, q, answer, when)


def _check_chain(
    triples: list[dict[str, Any]], q: dict[str, Any], answer: dict[str, Any], when: datetime
) -> None:
    """The gold decomposition: one stated triple per hop, linked, valid when the answer is."""
    chain = answer["chain"]
    assert [hop["relation"] for hop in chain] == q["relation"].split(" / ")
    assert chain[0]["subject"] == q["subject"] and chain[-1]["object"] == answer["answer"]
    for first, then in zip(chain, chain[1:], strict=False):
        assert first["object"] == then["subject"]
    for hop in chain:
        stated = [t for t in triples if {k: t[k] for k in hop} == hop]
        assert len(stated) == 1
        assert _time(stated[0]["valid_from"]) <= when
        assert stated[0]["valid_to"] is None or when < _time(stated[0]["valid_to"])


def test_a_world_reads_like_clark_news(tmp_path: Path) -> None:
    write_world(generate_world(WorldConfig(seed=1, people=5, steps=4)), tmp_path)
    clark = load_clark(tmp_path)
    assert clark.changes() and all(d.turns for d in clark.documents.values())
    for raw in _read(tmp_path, "documents.jsonl"):
        doc = Document.model_validate(raw)
        assert doc.kind.value == "conversation" and doc.turns
    stamps = [raw["timestamp"] for raw in _read(tmp_path, "documents.jsonl")]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    questions = load_questions(tmp_path / "questions.jsonl")
    hops = {q["hops"] for q in _read(tmp_path, "questions.jsonl")}
    assert hops == {1, 2, 3}
    assert schedule(questions, seed=0)


def test_the_speaker_says_their_own_news_in_the_first_person() -> None:
    world = generate_world(WorldConfig(seed=1, people=5, steps=4))
    own = others = 0
    for conversation in world.conversations:
        for statement, chunk_id in conversation.stated_in.items():
            [chunk] = [d for d in conversation.chunks if d.id == chunk_id]
            names = {statement.subject, statement.object}
            # The turn that names both, or the speaker as one and the other by name.
            [turn, *_] = [
                t
                for t in chunk.turns or ()
                if all(name in t.text or name == t.speaker for name in names)
            ]
            words = set(turn.text.replace(".", " ").replace("'", " ").split())
            if turn.speaker in names:
                assert words & {"I", "My", "my", "me"} and turn.speaker not in turn.text
                own += 1
            else:
                others += 1
    assert own > 0 and others > 0


@pytest.mark.parametrize("people", [1, 26])
def test_impossible_knobs_are_refused(people: int) -> None:
    with pytest.raises(ValueError, match="people"):
        WorldConfig(people=people)


def test_the_results_table_renders_convo_runs(tmp_path: Path) -> None:
    from factstream_lab.eval.tables import render

    run = {
        "method": "erase",
        "documents": 3,
        "asked": 2,
        "accuracy": 0.5,
        "lm": {"model": "m"},
        "checkpoints": [{"share": 1.0, "accuracy": 0.5}],
        "per_updates": {"0": 1.0, "1": 0.0},  # no question with two updates
        "tokens": {"ingest": {}, "ask": {}},
    }
    path = tmp_path / "convo.json"
    path.write_text(json.dumps(run))
    assert "| erase | 50.0% | 50.0% | 100.0 / 0.0 / -% | 0 + 0 |" in render("convo", [path])


def test_a_worlds_documents_publish_as_they_are(tmp_path: Path) -> None:
    from factstream.ops.publish import PublishReport, read_documents

    write_world(generate_world(WorldConfig(seed=2, people=4, steps=2)), tmp_path)
    report = PublishReport()
    docs = list(read_documents(tmp_path / "documents.jsonl", report, namespace="desk"))
    assert report.rejected == [] and docs
    assert all(d.namespace == "desk" and d.schema_version == 3 and d.turns for d in docs)
