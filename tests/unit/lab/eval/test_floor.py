"""Floor calibration: which (stale fact, newer document) pairs it builds, and its shares."""

from __future__ import annotations

import json
from pathlib import Path

from factstream.embed.fake import HashingEmbedder
from factstream_lab.eval.floor import calibrate_floor, superseded_pairs


def _write(folder: Path, name: str, rows: list[dict[str, object]]) -> None:
    (folder / name).write_text("".join(json.dumps(r) + "\n" for r in rows))


def _dataset(folder: Path) -> Path:
    _write(
        folder,
        "documents.jsonl",
        [
            {"id": "d1", "timestamp": "2019-01-01T00:00:00Z", "text": "Ann joined Acme."},
            {"id": "d2", "timestamp": "2021-01-01T00:00:00Z", "text": "Ann now works for Globex."},
            {"id": "d3", "timestamp": "2019-01-01T00:00:00Z", "text": "Bob lives in Rome."},
            {"id": "d4", "timestamp": "2020-01-01T00:00:00Z", "text": "Bob still lives in Rome."},
        ],
    )
    _write(
        folder,
        "triples.jsonl",
        [
            # Out of order on purpose: pairs follow valid_from.
            {
                "subject": "Ann",
                "relation": "employer",
                "object": "Globex",
                "valid_from": "2021-01-01T00:00:00Z",
                "document_id": "d2",
            },
            {
                "subject": "Ann",
                "relation": "employer",
                "object": "Acme",
                "valid_from": "2019-01-01T00:00:00Z",
                "document_id": "d1",
            },
            {
                "subject": "Bob",
                "relation": "residence",
                "object": "Rome",
                "valid_from": "2019-01-01T00:00:00Z",
                "document_id": "d3",
            },
            {
                "subject": "Bob",
                "relation": "residence",
                "object": "Rome",  # no change: no pair
                "valid_from": "2020-01-01T00:00:00Z",
                "document_id": "d4",
            },
            {
                "subject": "Bob",
                "relation": "residence",
                "object": "Oslo",  # document not shipped
                "valid_from": "2022-01-01T00:00:00Z",
                "document_id": "missing",
            },
        ],
    )
    return folder


def test_pairs_are_stale_facts_with_the_document_that_supersedes_them(tmp_path: Path) -> None:
    pairs = superseded_pairs(_dataset(tmp_path))
    assert [(p.stale_fact, p.document_text) for p in pairs] == [
        ("Ann employer Acme.", "Ann now works for Globex.")
    ]


async def test_shares_fall_as_the_floor_rises(tmp_path: Path) -> None:
    report = await calibrate_floor(HashingEmbedder(), _dataset(tmp_path), floors=(-1.0, 0.0, 1.01))
    assert report.pairs == 1 and report.unrelated_pairs == 0  # one subject: nothing unrelated
    kept = [row[1] for row in report.rows]
    assert kept[0] == 1.0 and kept[-1] == 0.0 and kept[0] >= kept[1] >= kept[2]
