"""`eval temporal --lm`: the dated CLARK-News questions answered by the LM, exact match per method.

The questions are ``eval temporal``'s ("On DATE, what was SUBJECT's RELATION?", inside,
before and after each interval), asked as multiple choice over every object the subject's
relation ever had (only those with two or more, so the date decides), and scored by exact
match against the object that held on that day. Per method, in a fresh namespace:

- ``erase``: the triples as facts with their gold valid intervals (what the ERASE editor
  with valid time writes), retrieved with the valid time the question names;
- ``rag``: the documents' passages (``edit/passages.py``, as the rag editor method
  stores them), no valid time, retrieved without a valid-time filter.

Both answer through the query engine the API uses (``QueryEngine.of``), with the configured
LM; the results files and the plot are written as ``eval clark``'s are (``eval/report.py``).
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from prometheus_client import CollectorRegistry

from factstream.config import Settings
from factstream.edit.materializer import Materializer
from factstream.edit.passages import passages
from factstream_lab.eval.clark import ChoiceAsker
from factstream_lab.eval.datasets import Clark, load_clark
from factstream_lab.eval.report import tokens_by_task, total_tokens
from factstream_lab.eval.temporal import add_edit, load_triples
from factstream_lab.eval.temporal_questions import (
    Position,
    TemporalQuestion,
    TripleInterval,
    build_questions,
    triple_intervals,
)

__all__ = [
    "LM_METHODS",
    "ChoiceQuestion",
    "LmMethod",
    "choice_questions",
    "run_temporal_lm",
    "score_answers",
]

LmMethod = Literal["erase", "rag"]
LM_METHODS: tuple[LmMethod, ...] = ("erase", "rag")
GROUPS = [*(p.value for p in Position), "all"]


@dataclass(frozen=True)
class ChoiceQuestion:
    """A dated question, its choices (the relation's objects) and the object that held."""

    question: TemporalQuestion
    choices: tuple[str, ...]
    expected: str


def choice_questions(
    facts: Sequence[TripleInterval], limit: int | None = None
) -> list[ChoiceQuestion]:
    """The dated questions whose relation had two or more objects and one on the day.

    Taken in turn from each position (inside, before, after) so that a limit keeps a mix.
    """
    objects: dict[tuple[str, str], set[str]] = defaultdict(set)
    by_index = {f.triple.index: f.triple for f in facts}
    for fact in facts:
        objects[(fact.triple.subject, fact.triple.relation)].add(fact.triple.object)
    queues: dict[Position, list[ChoiceQuestion]] = defaultdict(list)
    for q in build_questions(list(facts)):
        choices = objects[(q.subject, q.relation)]
        held = {by_index[i].object for i in q.gold}
        if len(choices) >= 2 and len(held) == 1:
            queues[q.position].append(ChoiceQuestion(q, tuple(sorted(choices)), held.pop()))
    mixed = [q for group in _interleave([queues[p] for p in Position]) for q in group]
    return mixed[:limit] if limit is not None else mixed


def _interleave(queues: list[list[ChoiceQuestion]]) -> list[list[ChoiceQuestion]]:
    longest = max((len(q) for q in queues), default=0)
    return [[q[i] for q in queues if i < len(q)] for i in range(longest)]


def score_answers(
    questions: Sequence[ChoiceQuestion], answers: Sequence[tuple[str | None, str | None]]
) -> dict[str, Any]:
    """Exact match overall and by position, the chance level, and every answer."""
    rows: list[dict[str, Any]] = [
        {
            "question": q.question.text,
            "position": q.question.position.value,
            "choices": list(q.choices),
            "expected": q.expected,
            "predicted": predicted,
            "correct": predicted == q.expected,
            "error": error,
        }
        for q, (predicted, error) in zip(questions, answers, strict=True)
    ]
    by_group = {}
    for group in GROUPS:
        chosen = [r for r in rows if group in ("all", r["position"])]
        right = sum(r["correct"] for r in chosen)
        accuracy = right / len(chosen) if chosen else None
        by_group[group] = {"asked": len(chosen), "correct": right, "accuracy": accuracy}
    chance = sum(1 / len(q.choices) for q in questions) / len(questions) if questions else None
    return {
        "asked": len(rows),
        "correct": by_group["all"]["correct"],
        "accuracy": by_group["all"]["accuracy"],
        "chance": chance,
        "by_group": by_group,
        "failed_answers": sum(r["error"] is not None for r in rows),
        "answers": rows,
    }


async def _load_passages(
    clark: Clark, materializer: Materializer, namespace: str, size: int
) -> None:
    for doc in sorted(clark.documents.values(), key=lambda d: d.position):
        texts = passages(doc.text, size)
        await materializer.apply(
            [
                add_edit(namespace, doc.id, pos, len(texts), text, doc.stream_time)
                for pos, text in enumerate(texts)
            ]
        )


async def run_temporal_lm(
    settings: Settings,
    data_dir: Path,
    method: LmMethod,
    limit: int | None = None,
    tick: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Load ``method``'s knowledge base into a fresh namespace, ask, score, drop it.

    What ``factstream eval temporal --lm --method M`` runs, on the configured clients.

    Returns:
        The results (the CLI writes them to ``temporal-lm-<method>.json``).
    """
    from factstream.clients import open_clients  # the real adapters: not for unit tests

    started = time.monotonic()
    clark = load_clark(data_dir)
    facts, _ = triple_intervals(clark.triples)
    questions = choice_questions(facts, limit)
    namespace = f"eval-temporal-lm-{datetime.now(UTC):%Y%m%d%H%M%S}-{method}"
    async with open_clients(settings, CollectorRegistry()) as clients:
        try:
            if method == "erase":
                await load_triples(clients.store, clients.embedder, clark, facts, namespace)
            else:
                materializer = Materializer(clients.store, clients.embedder)
                size = settings.editor.passage_chars
                await _load_passages(clark, materializer, namespace, size)
            loaded = time.monotonic()
            asker = ChoiceAsker(clients, settings, namespace)

            async def one(q: ChoiceQuestion) -> tuple[str | None, str | None]:
                found = await asker.ask(q.question.text, q.choices, valid_time=method == "erase")
                if tick is not None:
                    tick()
                return found

            answers = await asyncio.gather(*(one(q) for q in questions))
        finally:
            await clients.store.drop_namespace(namespace)
        tokens = tokens_by_task(clients.metrics.registry.collect())
    scored = score_answers(questions, answers)
    rows = scored.pop("answers")
    return {
        "kind": "temporal-lm",
        "method": method,
        "run": f"{datetime.now(UTC):%Y%m%d-%H%M%S}",
        "data": str(data_dir),
        "limit": limit,
        "lm": {"url": settings.lm.url, "model": settings.lm.model},
        "embed_model": settings.embed.model,
        **scored,
        "tokens": {"ask": tokens, "total": total_tokens(tokens)},
        "seconds": {
            "load": round(loaded - started, 1),
            "ask": round(time.monotonic() - loaded, 1),
            "wall": round(time.monotonic() - started, 1),
        },
        "answers": rows,
    }
