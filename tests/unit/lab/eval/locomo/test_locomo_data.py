"""The LoCoMo loader: sessions, turns, photos as captions, questions, slices, bad files."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from factstream_lab.eval.locomo.data import (
    LocomoInvalid,
    evidence_ids,
    load_locomo,
    parse_session_time,
)

SLICE = Path(__file__).parents[4] / "data" / "locomo-slice"


def test_sessions_turns_and_questions_are_read(locomo_dir: Path) -> None:
    (conversation,) = load_locomo(locomo_dir)
    assert conversation.id == "7" and conversation.speakers == ("Caroline", "Melanie")
    # Session 3 has a date and no turns: there is nothing to say in it.
    assert [s.number for s in conversation.sessions] == [1, 2]
    assert conversation.sessions[0].time == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert conversation.end == datetime(2023, 5, 25, 13, 14, tzinfo=UTC)
    turns = conversation.turns
    assert turns["D1:2"].text == "I went to a support group yesterday."
    assert turns["D1:3"].said == "Look at this. [shares a photo: a photo of a painting of a sunset]"
    assert turns["D1:1"].said == "Hey Mel!"
    assert conversation.session_of["D2:1"].number == 2
    categories = [q.category for q in conversation.questions]
    assert categories == [2, 2, 1, 5, 4]
    multi = conversation.questions[2]
    assert multi.answer == "2022" and multi.evidence == ("D1:2", "D2:1")
    adversarial = conversation.questions[3]
    assert adversarial.answer is None and adversarial.adversarial_answer == "a sunset"


def test_evidence_ids_split_joined_entries_and_drop_the_rest() -> None:
    assert evidence_ids(["D8:6; D9:17", "D8:6", "D10:01", "none"]) == ("D8:6", "D9:17", "D10:1")


def test_session_times_read_as_utc_and_bad_ones_are_refused() -> None:
    assert parse_session_time("12:09 am on 13 September, 2023") == datetime(
        2023, 9, 13, 0, 9, tzinfo=UTC
    )
    with pytest.raises(LocomoInvalid, match="not like"):
        parse_session_time("yesterday at noon")


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda raw: raw.pop("session_2_date_time"), "no session_2_date_time"),
        (lambda raw: raw["qa"][0].update(category=7), "category 7"),
        (lambda raw: raw["session_1"][0].update(dia_id="turn one"), "not like 'D1:3'"),
        (lambda raw: raw.pop("speaker_a"), "speaker_a"),
    ],
)
def test_a_bad_file_is_refused_with_the_reason(
    tmp_path: Path,
    locomo_raw: dict[str, Any],
    change: Callable[[dict[str, Any]], object],
    reason: str,
) -> None:
    raw = locomo_raw
    change(raw)
    (tmp_path / "1.json").write_text(json.dumps(raw))
    with pytest.raises(LocomoInvalid, match=reason):
        load_locomo(tmp_path)


def test_missing_folder_contents_and_unknown_ids_are_refused(
    tmp_path: Path, locomo_dir: Path
) -> None:
    with pytest.raises(LocomoInvalid, match="no conversation files"):
        load_locomo(tmp_path)
    with pytest.raises(LocomoInvalid, match="no conversation 99"):
        load_locomo(locomo_dir, ["99"])
    (locomo_dir / "8.json").write_text("{not json")
    with pytest.raises(LocomoInvalid, match="cannot be read as JSON"):
        load_locomo(locomo_dir, ["8"])


def test_a_slice_keeps_its_sessions_and_the_questions_answered_in_them(locomo_dir: Path) -> None:
    (conversation,) = load_locomo(locomo_dir)
    first = conversation.sliced(1)
    assert [s.number for s in first.sessions] == [1]
    # Evidence wholly in session 1 (the multi-hop question also needs D2:1; no evidence: out).
    assert [q.text for q in first.questions] == [
        "When did Caroline go?",
        "What did Caroline paint?",
    ]
    assert conversation.sliced(5) is conversation
    part = conversation.keep_turns({"D1:1", "D1:2"})
    assert list(part.turns) == ["D1:1", "D1:2"]


def test_the_slice_of_real_data_loads_whole() -> None:
    conversations = load_locomo(SLICE)
    assert conversations
    for conversation in conversations:
        raw = json.loads((SLICE / f"{conversation.id}.json").read_text())
        raw_turns = [
            t["dia_id"]
            for k, v in raw.items()
            if k.startswith("session_") and isinstance(v, list)
            for t in v
        ]
        assert sorted(conversation.turns) == sorted(raw_turns)
        assert len(conversation.questions) == len(raw["qa"])
        times = [s.time for s in conversation.sessions]
        assert times == sorted(times)
