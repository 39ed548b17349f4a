"""Each call's completion budget (``max_tokens``), derived from the answer's constraint.

The constraint bounds the answer: :func:`factstream.lm.grammar.longest_answer` is the most
characters a schema admits (compact JSON, every string at its ``maxLength``, every array at
its ``maxItems``), a choice its longest option. A call gets :func:`first_budget`: a token
per character of that longest answer. Every token writes at least one character and the
llama.cpp grammar admits no whitespace, so an answer the grammar enforces always ends
within its budget: it is never cut off at the token limit and asked again (issue 36: 9 of
100 calls of the demo were extraction answers cut off at a budget of half the expected
length). What keeps a generation short is the schema: a prompt derives its bounds from
its input (extraction: as many facts as the document's length suggests, strings no longer
than the document and the names it resolves), so a short document cannot buy a long one.
Only a prompt whose constraint bounds nothing gets its own ``answer_chars`` at
``CHARS_PER_TOKEN`` characters a token. An answer cut off anyway (a server that does not
enforce the grammar) is asked again with :func:`retry_budget`.
"""

from __future__ import annotations

import math

from factstream.errors import LMConfigError
from factstream.lm.grammar import longest_answer
from factstream.prompts.models import Choice, Constraint, JsonSchema

__all__ = ["CHARS_PER_TOKEN", "MIN_BUDGET", "first_budget", "longest_constrained", "retry_budget"]

CHARS_PER_TOKEN = 2
MIN_BUDGET = 8  # the end-of-text token and a short answer's few tokens


def longest_constrained(constraint: Constraint | None) -> int | None:
    """The most characters an answer under ``constraint`` has; None when unbounded."""
    match constraint:
        case JsonSchema(schema=schema):
            return longest_answer(schema)
        case Choice(options=options):
            return max(len(option) for option in options)
    return None


def first_budget(longest: int | None, answer_chars: int | None = None) -> int:
    """The first attempt's ``max_tokens``: a token per character of the ``longest`` answer
    the constraint admits (never cut off), or, with no such bound, the prompt's
    ``answer_chars`` for this input at ``CHARS_PER_TOKEN``.

    Raises:
        LMConfigError: neither bounds the answer.
    """
    if longest is not None:
        return max(MIN_BUDGET, longest + 1)
    if answer_chars is None:
        raise LMConfigError("the answer is unbounded: give its schema maxLength and maxItems")
    return max(MIN_BUDGET, math.ceil(answer_chars / CHARS_PER_TOKEN) + 1)


def retry_budget(previous: int, longest: int | None) -> int:
    """The ``max_tokens`` after an answer was cut off at ``previous``: twice that, up to a
    token per character of the ``longest`` answer."""
    doubled = 2 * previous
    return doubled if longest is None else max(previous, min(doubled, longest + 1))
