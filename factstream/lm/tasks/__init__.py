"""Typed LM tasks: each runs a registered prompt version and returns a validated TaskResult."""

from factstream.lm.tasks.answering import answer_choice, answer_free
from factstream.lm.tasks.editing import (
    classify_facts_batched,
    classify_facts_per_fact,
    extract_new_facts,
    rewrite_false_fact,
)
from factstream.lm.tasks.facts import FactStructure, NewFact
from factstream.lm.tasks.runner import TaskResult, TaskRunner

__all__ = [
    "FactStructure",
    "NewFact",
    "TaskResult",
    "TaskRunner",
    "answer_choice",
    "answer_free",
    "classify_facts_batched",
    "classify_facts_per_fact",
    "extract_new_facts",
    "rewrite_false_fact",
]
