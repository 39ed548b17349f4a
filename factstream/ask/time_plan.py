"""The LM plans a question's valid time where the rules cannot ("when X was CEO").

When neither the request nor a time expression the rules read gives a valid time, and the
question has a temporal cue (``TEMPORAL_CUE``: "when", "while", "during", "before",
"after", "former" ...), the ``plan_time`` prompt says which scope the question asks about
and copies the event it is relative to from the question. The dates then come from the
knowledge base, never from the LM: the event's words retrieve the fact that states it
(true at ``as_of``, any valid time, above ``min_similarity``), and its stored valid
interval ``[s, e)`` (``store.rules.valid_interval``) gives

- ``during``: ``[s, e)``; ``before``: ``[open, s)``; ``after``: ``[e, open)`` (an anchor
  that still holds has no after: ``unbounded``);
- ``past`` (no event: "former", "used to"): everything up to ``as_of`` (or now),
  ``[open, then)``, so facts whose interval closed count again.

Whatever fails (the LM's answer, an event with no fact, an unbounded side) leaves the
rules' valid time in place, and the result's ``plan`` says what happened and why;
``factstream_time_plans_total{outcome}`` counts plans by outcome.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, replace
from datetime import datetime

from prometheus_client import Counter

from factstream.ask.valid_time import ValidTime
from factstream.embed.base import Embedder
from factstream.errors import LMError, LMOutputInvalid
from factstream.lm.tasks.runner import TaskRunner
from factstream.prompts import plan_time
from factstream.prompts.plan_time import ANCHORED_SCOPES, TimePlan, event_span
from factstream.prompts.registry import typed_prompt
from factstream.store.base import FactStore
from factstream.store.rules import valid_interval
from factstream.temporal.intervals import ValidInterval, until
from factstream.topics.records import TimePlanNote, ValidTimeSource

__all__ = [
    "DEFAULT_ANCHOR_MIN_SIMILARITY",
    "DEFAULT_PLAN_TIME",
    "TEMPORAL_CUE",
    "TimePlanner",
    "has_temporal_cue",
]

DEFAULT_PLAN_TIME = "plan_time.v1"
DEFAULT_ANCHOR_MIN_SIMILARITY = 0.5
log = logging.getLogger(__name__)

# Words that scope a question in time without a date the rules read.
TEMPORAL_CUE = re.compile(
    r"\b(?:when|whenever|while|whilst|during|before|after|prior\s+to|former|formerly|previous"
    r"|previously|earlier|used\s+to|at\s+the\s+time|back\s+then|once|until|till|since)\b"
    r"|\bex-(?=[a-z])",
    re.IGNORECASE,
)
# The connective in front of an event, cut from the search text with it.
_CONNECTIVE = re.compile(
    r"(?:\b(?:back\s+when|at\s+the\s+time\s+when|at\s+the\s+time|when|whenever|while|whilst"
    r"|during|before|after|prior\s+to|until|till|since|once)\s+)?\Z",
    re.IGNORECASE,
)


def has_temporal_cue(question: str) -> bool:
    """Whether the question has a word that scopes it in time (``TEMPORAL_CUE``)."""
    return TEMPORAL_CUE.search(question) is not None


@dataclass(frozen=True)
class _Anchor:
    interval: ValidInterval | None
    note: TimePlanNote


@dataclass(frozen=True)
class TimePlanner:
    """Plans valid times with the LM, anchored on facts of the store.

    Args:
        store: where the event's fact is looked up.
        embedder: embeds the event's words.
        runner: runs ``plan_time`` on the LM.
        alpha: hybrid weight of the anchor search.
        min_similarity: the anchor's cosine similarity floor.
        counter: ``factstream_time_plans_total``, by outcome; None counts nothing.
        prompt: the ``plan_time`` version.
    """

    store: FactStore
    embedder: Embedder
    runner: TaskRunner
    alpha: float
    min_similarity: float = DEFAULT_ANCHOR_MIN_SIMILARITY
    counter: Counter | None = None
    prompt: str = DEFAULT_PLAN_TIME

    async def refine(
        self,
        namespace: str,
        rule: ValidTime,
        as_of: datetime | None,
        now: datetime,
        timings: dict[str, float] | None = None,
    ) -> ValidTime:
        """``rule`` (the rules' valid time), or the plan's where one applies and succeeds.

        Only a question the rules left at the default (source "current") with a temporal
        cue is planned; the seconds it took are added to ``timings["plan"]``.
        """
        if rule.source is not ValidTimeSource.CURRENT or not has_temporal_cue(rule.search_text):
            return rule
        start = time.perf_counter()
        planned = await self._plan(namespace, rule, as_of, as_of or now)
        if timings is not None:
            timings["plan"] = time.perf_counter() - start
        if self.counter is not None and planned.plan is not None:
            self.counter.labels(planned.plan.outcome).inc()
        return planned

    async def _plan(
        self, namespace: str, rule: ValidTime, as_of: datetime | None, then: datetime
    ) -> ValidTime:
        question = rule.search_text
        spec = typed_prompt(self.prompt, plan_time.PLAN_TIME_V1)
        try:
            result = await self.runner.run(spec, plan_time.PlanTimeContext(question=question))
        except LMOutputInvalid as exc:
            return _fallback(rule, TimePlanNote(outcome="invalid", reason=str(exc)[:300]))
        except LMError as exc:
            return _fallback(rule, TimePlanNote(outcome="lm_error", reason=str(exc)[:300]))
        plan = result.value
        if plan.scope == "none":
            note = TimePlanNote(outcome="no_scope", scope="none", reason="no time scope")
            return _fallback(rule, note)
        if plan.scope == "past":
            note = TimePlanNote(outcome="past", scope="past")
            return ValidTime(until(then), ValidTimeSource.PLAN, question, None, note)
        anchor = await self._anchor(namespace, plan, as_of)
        if anchor.interval is None:
            return _fallback(rule, anchor.note)
        text = _without_event(question, plan.event)
        return ValidTime(anchor.interval, ValidTimeSource.PLAN, text, plan.event, anchor.note)

    async def _anchor(self, namespace: str, plan: TimePlan, as_of: datetime | None) -> _Anchor:
        """The fact the event names, and the interval the plan's scope makes of its own."""
        assert plan.scope in ANCHORED_SCOPES  # noqa: S101 - the prompt's check ensures it
        vector = await self.embedder.embed(plan.event)
        hits = await self.store.search(
            namespace,
            plan.event,
            vector,
            as_of=as_of,
            top_k=1,
            min_similarity=self.min_similarity,
            alpha=self.alpha,
        )
        note = TimePlanNote(outcome="anchored", scope=plan.scope, event=plan.event)
        if not hits:
            reason = f"no fact states the event (similarity floor {self.min_similarity})"
            return _Anchor(None, note.model_copy(update={"outcome": "no_anchor", "reason": reason}))
        fact = hits[0].fact
        note = note.model_copy(update={"anchor_fact_id": fact.fact_id, "anchor_text": fact.text})
        held = valid_interval(fact, as_of)
        if plan.scope == "during":
            return _Anchor(held, note)
        end = held.start if plan.scope == "before" else held.end
        if end is None:
            side = "start" if plan.scope == "before" else "end"
            reason = f"the event's fact has no known {side}: {held.describe()}"
            return _Anchor(None, note.model_copy(update={"outcome": "unbounded", "reason": reason}))
        interval = until(end) if plan.scope == "before" else ValidInterval(end, None)
        return _Anchor(interval, note)


def _fallback(rule: ValidTime, note: TimePlanNote) -> ValidTime:
    log.info("time plan not used (%s): %s", note.outcome, note.reason)
    return replace(rule, plan=note)


def _without_event(question: str, event: str) -> str:
    """The question without the event and the connective before it ("when"), to search with."""
    span = event_span(question, event)
    if span is None:
        return question
    start, end = span
    connective = _CONNECTIVE.search(question, 0, start)
    if connective is not None:
        start = connective.start()
    rest = re.sub(r"\s+", " ", f"{question[:start]} {question[end:]}")
    rest = re.sub(r"\s+(?=[?.!,;:])", "", rest).strip(" ,;:")
    return rest if re.search(r"\w", rest) else question
