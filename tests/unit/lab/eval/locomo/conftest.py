"""A small LoCoMo conversation in the data's format, written for each test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


def conversation_json() -> dict[str, Any]:
    """Two sessions with turns, a dated session without turns, questions of each kind."""
    return {
        "speaker_a": "Caroline",
        "speaker_b": "Melanie",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel!"},
            {
                "speaker": "Caroline",
                "dia_id": "D1:2",
                "text": "I went to a  support group yesterday.",
            },
            {
                "speaker": "Melanie",
                "dia_id": "D1:3",
                "text": "Look at this.",
                "img_url": ["https://example.invalid/x.jpg"],
                "blip_caption": "a photo of a painting of a sunset",
            },
        ],
        "session_2_date_time": "1:14 pm on 25 May, 2023",
        "session_2": [
            {"speaker": "Melanie", "dia_id": "D2:1", "text": "I ran a race last Saturday."},
            {"speaker": "Caroline", "dia_id": "D2:2", "text": "Wow, how was it?"},
        ],
        "session_3_date_time": "10:00 am on 1 June, 2023",
        "session_1_summary": "not an input",
        "qa": [
            {"question": "When did Caroline go?", "answer": "7 May 2023", "evidence": ["D1:2"],
             "category": 2},
            {"question": "When was the race?", "answer": "The sunday before 25 May 2023",
             "evidence": ["D2:1"], "category": 2},
            {"question": "What did they do?", "answer": 2022, "evidence": ["D1:2; D2:1"],
             "category": 1},
            {"question": "What did Caroline paint?", "adversarial_answer": "a sunset",
             "evidence": ["D1:3"], "category": 5},
            {"question": "Who is it?", "answer": "x", "evidence": [], "category": 4},
        ],
    }  # fmt: skip


@pytest.fixture
def locomo_raw() -> dict[str, Any]:
    """The conversation's JSON, to change before writing it."""
    return conversation_json()


@pytest.fixture
def locomo_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "locomo"
    folder.mkdir()
    (folder / "7.json").write_text(json.dumps(conversation_json()))
    return folder
