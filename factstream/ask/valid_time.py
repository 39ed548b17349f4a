"""Which valid time a question asks about: given by the request, named in it, or now.

A question is read bitemporally (docs/design.md section 3): ``as_of`` says what the knowledge
base believed (a time of belief), the valid time says when in the world the answer should
hold. :func:`question_valid_time` decides the second, in this order:

1. the request's own (``valid_at`` / ``valid_between``): ``source`` "request";
2. a time the question names ("On 2019-03-04, who ...", "in 2019", "last year"), read with
   :func:`factstream.temporal.parse_time` against ``as_of`` (or now): ``source``
   "question", and the search text may leave the expression out;
3. otherwise what still holds at ``as_of`` (or now): ``[then, open)``, so a fact whose
   interval a world change closed drops out, as an invalidated one did before valid time:
   ``source`` "current". A question with a time the rules cannot read ("when X was CEO")
   may then be planned by the LM (``ask/time_plan.py``): ``source`` "plan".

:data:`ValidTimeSource.NONE` (no valid-time filter at all) is what reads did before valid
time; evaluations compare against it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from factstream.temporal.intervals import ValidInterval, since
from factstream.temporal.parse import parse_time, strip_time
from factstream.topics.records import TimePlanNote, ValidTimeSource, ValidWindow

__all__ = ["DEFAULT_STRIP_TIME", "ValidTime", "ValidTimeSource", "question_valid_time"]

# Search with the question's time expression left out. `eval temporal` on CLARK-News
# (results/eval/temporal.json): gold ranked first 1.0 either way, but the gold fact's cosine
# similarity to the search text is 0.751 without the date and 0.682 with it, a wider
# margin over the similarity floor; the words of a date match no fact's text.
DEFAULT_STRIP_TIME = True
_LEADING_PUNCTUATION = re.compile(r"^[\s,;:.\-\u2013\u2014]+")


@dataclass(frozen=True)
class ValidTime:
    """The valid-time filter a question is read with, and what to search for.

    Attributes:
        interval: the facts must have held at some instant of it; None: no filter.
        source: where it came from.
        expression: the question's words it was read from (source "question"), or the
            event the LM's plan anchored on (source "plan").
        search_text: the text to retrieve facts with (the question, perhaps without the
            time expression).
        plan: what the LM's time plan did, when one was made (it may have failed and left
            the rules' result in place: ``plan.reason`` says why).
    """

    interval: ValidInterval | None
    source: ValidTimeSource
    search_text: str
    expression: str | None = None
    plan: TimePlanNote | None = None

    def describe(self) -> str:
        """In words, for an answer: '"On 2019-03-04" = 2019-03-04 to 2019-03-05' and so on."""
        if self.interval is None:
            return "no valid-time filter"
        shown = self.interval.describe()
        if self.source is ValidTimeSource.QUESTION:
            return f'"{self.expression}" = {shown}'
        if self.source is ValidTimeSource.CURRENT:
            return f"what still holds: {shown}"
        if self.source is ValidTimeSource.PLAN and self.plan is not None:
            return _describe_plan(self.plan, shown)
        return shown

    def window(self) -> ValidWindow | None:
        """The interval as the wire records carry it (None when there is no filter)."""
        if self.interval is None:
            return None
        return ValidWindow(start=self.interval.start, end=self.interval.end)


def question_valid_time(
    question: str,
    *,
    valid: ValidInterval | None,
    as_of: datetime | None,
    now: datetime,
    strip: bool = DEFAULT_STRIP_TIME,
    enabled: bool = True,
) -> ValidTime:
    """The valid time to read ``question`` with (rules in the module docstring).

    Args:
        question: the question as asked.
        valid: the request's valid time, if it gave one.
        as_of: the time of belief asked about (None: now).
        now: the present, for relative expressions and the default.
        strip: search without the question's time expression.
        enabled: False reads without any valid-time filter (source "none").

    Returns:
        The interval, where it came from, and the text to search with.
    """
    if not enabled:
        return ValidTime(None, ValidTimeSource.NONE, question)
    if valid is not None:
        return ValidTime(valid, ValidTimeSource.REQUEST, question)
    then = as_of or now
    reference = parse_time(question, then)
    if reference is None:
        return ValidTime(since(then), ValidTimeSource.CURRENT, question)
    text = question
    if strip:
        rest = _LEADING_PUNCTUATION.sub("", strip_time(question, reference))
        text = rest[:1].upper() + rest[1:] if re.search(r"\w", rest) else question
    return ValidTime(reference.interval, ValidTimeSource.QUESTION, text, reference.text)


def _describe_plan(plan: TimePlanNote, shown: str) -> str:
    if plan.anchor_text is None:
        return f"what held before now ({plan.scope}): {shown}"
    return f'{plan.scope} "{plan.event}" (the fact "{plan.anchor_text}") = {shown}'
