"""The ERASE question protocol, checked against a schedule worked out by hand."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from factstream_lab.eval.protocol import load_questions, schedule, score, truncate


def y(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=UTC)


def _questions(tmp_path: Path) -> Path:
    def ans(a: str, start: int | None, end: int | None) -> dict[str, object]:
        iso = lambda v: f"{v}-01-01T00:00:00Z" if v else None  # noqa: E731
        return {"answer": a, "known_from": iso(start), "known_until": iso(end)}

    rows = [
        {
            "question": "q0",
            "choices": ["A", "B"],
            "answers": [ans("B", 2020, None), ans("A", None, 2020)],
        },
        {
            "question": "q1",
            "choices": ["X", "Y", "Z"],
            "answers": [ans("X", None, 2021), ans("Y", 2021, 2022), ans("Z", 2022, None)],
        },
        {"question": "q2", "choices": ["P", "Q"], "answers": [ans("P", 2019, None)]},
        {
            "question": "q3",
            "choices": ["M", "N"],
            "answers": [ans("M", None, 2023), ans("N", 2023, None)],
        },
    ]
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_answers_hold_in_their_interval(tmp_path: Path) -> None:
    q0, q1, q2, _ = load_questions(_questions(tmp_path))
    assert [a.answer for a in q0.answers] == ["A", "B"]  # sorted by known_from, None first
    assert (q0.answer_at(y(2019)), q0.answer_at(y(2020))) == ("A", "B")
    assert [q1.answer_at(y(v)) for v in (2020, 2021, 2022, 2030)] == ["X", "Y", "Z", "Z"]
    assert (q2.answer_at(y(2018)), q2.answer_at(y(2019))) == (None, "P")


def test_schedule_by_hand(tmp_path: Path) -> None:
    questions = load_questions(_questions(tmp_path))
    # Changes at 2020 (q0), 2021 and 2022 (q1), 2023 (q3): 20% -> 1st, 40% -> 2nd, 60% -> 3rd,
    # 80% and 100% -> 4th.
    plan = schedule(questions, seed=7)
    assert [cp.time for cp in plan] == [y(2020), y(2021), y(2022), y(2023), y(2023)]
    assert [cp.changed for cp in plan] == [[0], [1], [1], [3], []]
    assert [len(cp.unchanged) for cp in plan] == [1, 1, 1, 1, 0]
    for cp in plan:
        assert not set(cp.unchanged) & set(cp.changed)
        assert all(questions[i].answer_at(cp.time) is not None for i in cp.asked)
    assert plan[2].updates[1] == 2 and plan[0].updates[0] == 1
    assert schedule(questions, seed=7) == plan  # seeded: the same sample every run


def test_score_exact_match_per_checkpoint_and_updates(tmp_path: Path) -> None:
    questions = load_questions(_questions(tmp_path))
    plan = schedule(questions, seed=7)
    truth = {(cp.share, i): questions[i].answer_at(cp.time) for cp in plan for i in cp.asked}
    wrong_on_changed = {
        key: ("wrong" if key[1] in next(cp.changed for cp in plan if cp.share == key[0]) else v)
        for key, v in truth.items()
    }
    assert score(questions, plan, truth).per_checkpoint == {
        "20%": 1.0,
        "40%": 1.0,
        "60%": 1.0,
        "80%": 1.0,
    }  # 100% asks nothing (no change since 80%, so no sample either): it has no accuracy
    result = score(questions, plan, wrong_on_changed)
    assert result.per_checkpoint["20%"] == 0.5 and result.correct == result.asked - 4
    # Seed 7 samples q2, q0, q2, q2 as the unchanged ones. Wrong: q0@20% (1 update), q1@40%
    # (1), q1@60% (2), q3@80% (1); right: q2 three times (0 updates) and q0@40% (1 update).
    assert [cp.unchanged for cp in plan] == [[2], [0], [2], [2], []]
    assert result.per_updates == {"0": 1.0, "1": 0.25, "2+": 0.0}


def test_truncate_keeps_what_the_stream_knows_by_then(tmp_path: Path) -> None:
    questions = load_questions(_questions(tmp_path))
    cut = max(t for q in questions for t in q.change_times) - timedelta(days=1)
    kept = truncate(questions, cut)
    assert [q.index for q in kept] == list(range(len(kept)))
    for q in kept:
        original = next(o for o in questions if o.question == q.question)
        assert q.answers[-1].known_until is None
        assert all(a.known_from is None or a.known_from <= cut for a in q.answers)
        # Up to the cut, the truncated question answers as the original did.
        assert q.answer_at(cut) == original.answer_at(cut)
    assert sum(len(q.change_times) for q in kept) == sum(
        t <= cut for q in questions for t in q.change_times
    )
