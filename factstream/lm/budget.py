"""Each call's completion budget (``max_tokens``), derived from the answer's constraint.

The constraint bounds the answer: :func:`factstream.lm.grammar.longest_answer` is the most
characters a schema admits (compact JSON, every string at its ``maxLength``), a choice its
longest option. A call gets :func:`first_budget`: that length at ``CHARS_PER_TOKEN``
characters a token, or the length the prompt expects from its input where that is smaller
(``Prompt.answer_chars``: a short document states few facts). A token of English text or of
JSON keys carries about four characters, so an answer is cut at the first budget only when
it fills about half of what its schema allows everywhere at once: a runaway generation,
not an answer. An answer cut off anyway is asked again with :func:`retry_budget`, twice the
budget, up to one token per character of the longest answer, which no answer of ASCII text
can outrun (each token writes at least one character, and the llama.cpp grammar admits no
whitespace).
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
    """The first attempt's ``max_tokens``: the ``longest`` answer the constraint admits, or
    the prompt's ``answer_chars`` for this input where fewer, at ``CHARS_PER_TOKEN``.

    Raises:
        LMConfigError: neither bounds the answer.
    """
    bounds = [chars for chars in (longest, answer_chars) if chars is not None]
    if not bounds:
        raise LMConfigError("the answer is unbounded: give its schema maxLength and maxItems")
    return max(MIN_BUDGET, math.ceil(min(bounds) / CHARS_PER_TOKEN) + 1)


def retry_budget(previous: int, longest: int | None) -> int:
    """The ``max_tokens`` after an answer was cut off at ``previous``: twice that, up to a
    token per character of the ``longest`` answer."""
    doubled = 2 * previous
    return doubled if longest is None else max(previous, min(doubled, longest + 1))
