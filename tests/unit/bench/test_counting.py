"""bench.counting and bench.breakdown's pure parts: steps timed wherever they were bound,
only the outermost call counted, everything put back; texts embedded again; stages."""

from __future__ import annotations

from datetime import UTC, datetime

from bench.breakdown import stage_of
from bench.counting import Counting
from factstream.edit import grounding, pipeline
from factstream.temporal import parse


def test_a_step_is_timed_where_it_was_bound_and_put_back_after() -> None:
    original = pipeline.check_grounded
    counting = Counting()
    with counting.installed():
        assert pipeline.check_grounded is not original
        assert grounding.check_grounded is not original
        pipeline.check_grounded("Ada Lovelace wrote notes.", "Ada Lovelace wrote notes.")
        grounding.check_grounded("Ada wrote.", "Ada wrote.")
    assert pipeline.check_grounded is original and grounding.check_grounded is original
    assert counting.cpu.calls["grounding"] == 2
    assert counting.cpu.seconds["grounding"] > 0


def test_a_step_calling_itself_counts_once() -> None:
    counting = Counting()
    now = datetime(2024, 5, 1, tzinfo=UTC)
    with counting.installed():
        # find_times and parse_time share a step: a call inside the other is not counted.
        parse.parse_time("in March 2020", now)
    assert counting.cpu.calls["time parsing"] == 1


def test_texts_embedded_again_are_counted() -> None:
    counting = Counting()
    counting.embedded([["a", "b"], ["a"], ["c", "b"]])
    assert counting.texts_summary(2, "doc") == {
        "texts": 5,
        "distinct": 3,
        "embedded_again": 2,
        "texts_per_doc": 2.5,
        "embedded_again_per_doc": 1.0,
    }


def test_own_modules_go_to_their_stage() -> None:
    assert stage_of("edit/retrieval.py") == "editor retrieval (rerank, names)"
    assert stage_of("text/names.py") == "editor retrieval (rerank, names)"
    assert stage_of("store/weaviate_store.py") == "store client (Weaviate)"
    assert stage_of("edit/grounding.py") == "grounding"
    assert stage_of("lm/tasks/runner.py") == "LM client and tasks"
    assert stage_of("edit/materializer.py") == "editor and materializer"
    assert stage_of("config.py") == "other own code"
