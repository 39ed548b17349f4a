"""eval temporal on a hand-made chain whose answers are known (in-memory store, no LM)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import orjson

from factstream.embed.fake import HashingEmbedder
from factstream.store.memory import InMemoryFactStore
from factstream_lab.eval.datasets import load_clark
from factstream_lab.eval.temporal import MODES, Retrieval, run_temporal
from factstream_lab.eval.temporal_questions import (
    Position,
    build_questions,
    phrase,
    triple_intervals,
)

RETRIEVAL = Retrieval(top_k=5, min_similarity=-1.0, alpha=0.75)


def _write(path: Path, rows: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _triple(subject: str, relation: str, obj: str, start: str | None, end: str | None) -> dict:
    return {
        "subject": subject,
        "relation": relation,
        "object": obj,
        "valid_from": start,
        "valid_to": end,
        "document_id": f"d-{obj}",
    }


def _dataset(folder: Path) -> Path:
    _write(
        folder / "documents.jsonl",
        [
            {"id": "d-Acme", "timestamp": "2019-01-01T00:00:00Z", "text": "Ann joined Acme."},
            {"id": "d-Globex", "timestamp": "2021-01-01T00:00:00Z", "text": "Ann left for Globex."},
        ],
    )
    _write(
        folder / "triples.jsonl",
        [
            _triple("Ann", "employer", "Acme", "2019-01-01T00:00:00Z", "2021-01-01T00:00:00Z"),
            _triple("Ann", "employer", "Globex", "2021-01-01T00:00:00Z", None),
            _triple("Ann", "employer", "Initech", "2022-01-01T00:00:00Z", "2022-01-01T00:00:00Z"),
            _triple("Ann", "employer", "Hooli", "2020-01-01T00:00:00Z", "http://wd/genid/x"),
            _triple("Bob", "residence", "Oslo", None, None),
            _triple("Bob", "residence", "Rome", None, "2015-06-01T00:00:00Z"),
        ],
    )
    return folder


def test_questions_are_asked_inside_each_interval_and_at_its_ends(tmp_path: Path) -> None:
    clark = load_clark(_dataset(tmp_path))
    facts, unusable = triple_intervals(clark.triples)
    assert [f.triple.object for f in facts] == ["Acme", "Globex", "Rome"]
    assert unusable == {"empty": 1, "unknown date": 1, "no interval": 1}
    asked = {(q.subject, q.day, q.position): sorted(q.gold) for q in build_questions(facts)}
    assert asked == {
        ("Ann", date(2020, 1, 1), Position.INSIDE): [0],  # the middle of 2019-2020
        ("Ann", date(2022, 1, 1), Position.INSIDE): [1],  # a year into an open end
        ("Bob", date(2014, 6, 1), Position.INSIDE): [5],  # a year before an open start
        ("Ann", date(2020, 12, 31), Position.BEFORE): [0],  # the day before Globex
        ("Ann", date(2021, 1, 1), Position.AFTER): [1],  # the day Acme ended
    }
    assert phrase("Ann", "employer", date(2019, 3, 4)) == (
        "On March 4, 2019, what was Ann's employer?"
    )


async def test_valid_time_ranks_the_fact_that_held_first(tmp_path: Path) -> None:
    store = InMemoryFactStore()
    report = await run_temporal(
        _dataset(tmp_path), store, HashingEmbedder(), RETRIEVAL, out=tmp_path / "out"
    )
    assert report.facts == 3 and report.questions == {
        "inside": 3,
        "before": 1,
        "after": 1,
        "all": 5,
    }
    by_mode = {score.mode.name: score for score in report.scores}
    assert set(by_mode) == {mode.name for mode in MODES}
    for mode in MODES[:2]:
        assert by_mode[mode.name].accuracy == 1.0, by_mode[mode.name].misses
    baseline = by_mode["no valid-time filter"]
    assert baseline.accuracy < 1.0 and baseline.misses
    assert await store.namespaces() == []  # the namespace is dropped afterwards
    written = orjson.loads((tmp_path / "out" / "temporal.json").read_bytes())
    assert written["kind"] == "temporal" and written["scores"][0]["accuracy"] == 1.0
