"""The categories of update-retrieval's misses, from the ranks in a results file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.clark_stream import clark_stream

from factstream_lab.eval.datasets import load_clark
from factstream_lab.eval.misses import miss_categories
from factstream_lab.eval.retrieval import scored_changes


@pytest.mark.parametrize(
    ("rank", "category"),
    [
        (1, None),
        (3, "seen, not first: no other fact of the subject"),
        (11, "not seen: document names the subject"),
        (None, "not seen: document names the subject"),
    ],
)
def test_each_rank_falls_in_its_category(tmp_path: Path, rank: int | None, category: str) -> None:
    clark = load_clark(clark_stream(tmp_path))
    [change] = scored_changes(clark)  # Ann: Acme, superseded by d3, which names Ann
    counts = miss_categories(clark, {"config": {"top_k": 10}, "ranks": [rank]})
    assert counts == ({category: 1} if category else {})
    assert change.stale.object == "Acme"


def test_the_recorded_view_wins_over_the_rank(tmp_path: Path) -> None:
    clark = load_clark(clark_stream(tmp_path))
    result = {"config": {"top_k": 10}, "ranks": [2], "seen": [False]}  # below the floor
    assert miss_categories(clark, result) == {"not seen: document names the subject": 1}


@pytest.mark.parametrize(
    ("source", "category"),
    [
        (None, "not seen: names none of them"),
        (
            "https://news.example/2021/01/ann-joins-globex-today",
            "not seen: document names the subject",
        ),
    ],
)
def test_a_title_from_the_source_counts_as_the_document_naming(
    tmp_path: Path, source: str | None, category: str
) -> None:
    folder = clark_stream(tmp_path)
    docs = folder / "documents.jsonl"
    rows = [json.loads(line) for line in docs.read_text().splitlines()]
    for row in rows:
        if row["id"] == "d3":  # the document that supersedes Ann's Acme: no name in its text
            row.update(text="She left for Globex.", source=source)
    docs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = {"config": {"top_k": 10}, "ranks": [None]}
    assert miss_categories(load_clark(folder), result) == {category: 1}
