"""The demo's closing story on the in-process editor: the change, the question, the share."""

from __future__ import annotations

import json

from fixtures.decisions import Decisions
from fixtures.editing import Harness, doc
from prometheus_client import CollectorRegistry, generate_latest

from factstream.ask.query import QueryEngine
from factstream.config import ApiSettings
from factstream.lm.tasks.runner import TaskRunner
from factstream.metrics import LMMetrics
from factstream.topics.records import Document, FactEdit
from factstream_lab.demo.story import (
    Grounding,
    Story,
    TruthChange,
    ask_before_and_after,
    find_change,
    grounding_from_metrics,
    lm_calls_from_metrics,
    question_for,
    refused_changes_from_metrics,
    story_lines,
)

PARKER, QUINN = "Parker is CEO of Northwind.", "Quinn is CEO of Northwind."


def doc_of(doc_id: str, text: str) -> Document:
    return Document.model_validate(
        {
            "id": doc_id,
            "namespace": "desk",
            "kind": "article",
            "timestamp": "2023-01-05T00:00:00Z",
            "text": text,
        }
    )


async def northwind() -> tuple[Harness, list[FactEdit], dict[str, object]]:
    decisions = Decisions(extract={"appointed": [PARKER]})
    h = Harness(decisions)
    first = doc("Northwind appointed Parker as CEO.", 1, "d1")
    edits = await h.feed(first)
    decisions.extract = {}
    decisions.outdated = {"Parker is CEO": QUINN}
    second = doc("Quinn succeeded Parker as CEO of Northwind.", 5, "d2")
    edits += await h.feed(second)
    return h, edits, {"d1": first, "d2": second}


async def test_the_story_shows_the_change_and_the_answers_before_and_after() -> None:
    h, edits, documents = await northwind()
    change = find_change(edits, documents)  # type: ignore[arg-type]
    assert change is not None
    assert (change.op, change.before, change.after) == ("rewrite", PARKER, QUINN)
    assert change.document.id == "d2"
    question = question_for(change)
    assert question == f"Is this true: {PARKER}"

    engine = QueryEngine(
        h.store, h.embedder, TaskRunner(h.lm), ApiSettings(min_similarity=-1), alpha=0.75
    )
    before, after = await ask_before_and_after(engine, "desk", question, change.document.timestamp)
    # The scripted LM answers with the first fact it is shown.
    assert before.answer == PARKER and [f[:2] for f in before.facts] == [(PARKER, True)]
    assert after.answer == QUINN and [f[0] for f in after.facts] == [QUINN]

    story = Story(change, question, before, after, Grounding(kept=3, refused=1))
    lines = "\n".join(story_lines(story))
    assert f"before:   {PARKER}" in lines and f"after:    {QUINN}" in lines
    assert "document: d2 (2023-01-05): Quinn succeeded Parker" in lines
    assert f"cited: {PARKER} [true then" in lines
    assert "kept 3 of 4 facts the LM added or rewrote (75.0%)" in lines
    saved = json.loads(json.dumps(story.to_json(), default=str))
    assert saved["change"]["document"]["id"] == "d2" and saved["grounding"]["share_kept"] == 0.75


async def test_without_a_change_the_story_says_so() -> None:
    _, edits, documents = await northwind()
    first_only = [e for e in edits if e.document_id == "d1"]
    assert find_change(first_only, documents) is None  # type: ignore[arg-type]
    lines = story_lines(Story(None, None, None, None, None))
    assert lines[0].startswith("No change to a fact's truth was accepted in this run")
    assert lines[0].endswith("was applied.")
    assert lines[-1] == "Grounding check: no counts from the worker."
    refused = story_lines(Story(None, None, None, None, None, refused_changes=2))
    assert refused[0].endswith("(the checks refused 2).")


def test_the_story_names_a_change_as_one_the_checks_accepted() -> None:
    document = doc_of("d2", "Quinn succeeded Parker as CEO of Northwind.")
    change = TruthChange("invalidate", PARKER, None, document)
    lines = story_lines(Story(change, None, None, None, None, refused_changes=1))
    assert lines[0] == "A change the checks accepted (1 other changes refused):"
    assert lines[3] == "  after:    never was true (invalidated: a correction)"


def test_refused_changes_are_read_from_the_subject_checks_counter() -> None:
    text = (
        "# TYPE factstream_lm_subject_checked_total counter\n"
        'factstream_lm_subject_checked_total{task="classify_facts",model="m",outcome="kept"} 5\n'
        'factstream_lm_subject_checked_total{task="classify_facts",model="m",outcome="refused"} 3\n'
    )
    assert refused_changes_from_metrics(text) == 3
    assert refused_changes_from_metrics("") == 0


def test_the_grounding_share_is_read_from_the_workers_counters() -> None:
    registry = CollectorRegistry()
    lm = LMMetrics.create(registry)
    lm.grounded.labels("extract_facts", "m", "kept").inc(40)
    lm.grounded.labels("rewrite_fact", "m", "kept").inc(5)
    lm.grounded.labels("extract_facts", "m", "refused").inc(7)
    lm.refused.labels("extract_facts", "m", "ungrounded_entity").inc(6)
    lm.refused.labels("rewrite_fact", "m", "placeholder").inc(1)
    lm.refused.labels("extract_facts", "m", "structure").inc(9)  # not the grounding check's
    grounding = grounding_from_metrics(generate_latest(registry).decode())
    assert grounding == Grounding(45, 7, {"placeholder": 1, "ungrounded_entity": 6})
    assert grounding.share_kept == 45 / 52
    assert grounding_from_metrics("") is None


def test_lm_calls_are_read_by_outcome() -> None:
    registry = CollectorRegistry()
    lm = LMMetrics.create(registry)
    lm.requests.labels("extract_facts", "m", "ok").inc(40)
    lm.requests.labels("classify_facts", "m", "ok").inc(30)
    lm.requests.labels("extract_facts", "m", "cached").inc(2)
    assert lm_calls_from_metrics(generate_latest(registry).decode()) == {"cached": 2, "ok": 70}
