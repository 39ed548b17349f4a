"""Time resolved: gold answers normalised to intervals, evidence read against its session."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from factstream.temporal import intervals as iv
from factstream_lab.eval.locomo.data import Question, load_locomo
from factstream_lab.eval.locomo.timing import (
    gold_interval,
    granularity,
    mentions_time,
    read_evidence,
    resolved_within,
)

GOLD: list[tuple[str, str, str]] = [
    ("7 May 2023", "2023-05-07 to 2023-05-08", "day"),
    ("February 24, 2023", "2023-02-24 to 2023-02-25", "day"),
    ("19 January, 2023", "2023-01-19 to 2023-01-20", "day"),
    ("The sunday before 25 May 2023", "2023-05-21 to 2023-05-22", "day"),
    ("The Friday before 15 July 2023", "2023-07-14 to 2023-07-15", "day"),
    ("The week before 9 June 2023", "2023-05-29 to 2023-06-05", "week"),
    ("The week of 23 August 2023", "2023-08-21 to 2023-08-28", "week"),
    ("Two weeks before 11 August 2023", "2023-07-24 to 2023-07-31", "week"),
    ("The weekend before 17 July 2023", "2023-07-15 to 2023-07-17", "weekend"),
    ("two weekends before 17 July 2023", "2023-07-08 to 2023-07-10", "weekend"),
    ("The weekend before 13 September 2023", "2023-09-09 to 2023-09-11", "weekend"),
    ("first weekend of August 2023", "2023-08-05 to 2023-08-07", "weekend"),
    ("June 2023", "2023-06-01 to 2023-07-01", "month"),
    ("January, 2023", "2023-01-01 to 2023-02-01", "month"),
    ("Around August 2022", "2022-08-01 to 2022-09-01", "month"),
    ("The summer of 2022", "2022-06-01 to 2022-09-01", "season"),
    ("2022", "2022-01-01 to 2023-01-01", "year"),
    ("In 2013", "2013-01-01 to 2014-01-01", "year"),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "described", "unit"), GOLD)
def test_gold_answers_name_an_interval(answer: str, described: str, unit: str) -> None:
    gold = gold_interval(answer)
    assert gold is not None, answer
    assert (gold.interval.describe(), gold.granularity) == (described, unit)


@pytest.mark.parametrize(
    "answer",
    ["4 years", "10 years ago", "A few years ago", "Since 2016", "13 August", "her mother",
     "The sunday before 3` July 2023", "two weeks"],
)  # fmt: skip
def test_answers_that_name_no_interval_are_not_scored(answer: str) -> None:
    assert gold_interval(answer) is None


def test_granularity_follows_the_length() -> None:
    assert granularity(iv.day(date(2023, 2, 28))) == "day"
    assert granularity(iv.month(2023, 2)) == "month"
    assert granularity(iv.year(2024)) == "year"
    assert granularity(iv.quarter(2023, 1)) == "season"  # 90 days, as a winter is
    assert granularity(iv.since(datetime(2023, 1, 1, tzinfo=UTC))) == "other"


def test_a_reading_counts_only_within_the_gold() -> None:
    june = iv.month(2023, 6)
    assert resolved_within(iv.day(date(2023, 6, 30)), june)
    assert resolved_within(june, june)
    assert not resolved_within(iv.week(date(2023, 6, 28)), june)  # runs into July
    assert not resolved_within(iv.year(2023), june)  # coarser than the gold
    assert not resolved_within(iv.since(datetime(2023, 6, 2, tzinfo=UTC)), june)


def test_evidence_is_read_against_its_session(locomo_dir: Path) -> None:
    (conversation,) = load_locomo(locomo_dir)
    went, race = conversation.questions[:2]
    reading = read_evidence(conversation, went)
    assert reading is not None and reading.expression == "yesterday"
    assert reading.interval == iv.day(date(2023, 5, 7))
    race_read = read_evidence(conversation, race)
    assert race_read is not None and race_read.interval == iv.day(date(2023, 5, 20))
    # The gold says Sunday, the turn Saturday: not resolved.
    gold = gold_interval(race.answer or "")
    assert gold is not None and not resolved_within(race_read.interval, gold.interval)


def test_a_turn_without_a_time_tells_of_its_session_day(locomo_dir: Path) -> None:
    (conversation,) = load_locomo(locomo_dir)
    question = Question("When was the photo?", "8 May 2023", ("D9:9", "D1:3"), 2)
    reading = read_evidence(conversation, question)
    assert reading is not None and reading.expression is None and reading.turn == "D1:3"
    assert reading.interval == iv.day(date(2023, 5, 8))
    assert read_evidence(conversation, Question("?", "x", ("D9:9",), 2)) is None


def test_time_words_are_found_apart_from_the_parser() -> None:
    assert mentions_time("we went there recently")  # the parser reads no time here
    assert mentions_time("Last Fri I took the kids")
    assert not mentions_time("That sounds great, keep it up!")
