"""Each call's max_tokens comes from its schema, whose bounds come from its input: a token
per character of the longest answer the schema admits, so a grammar-enforced answer is
never cut off, and a short document (a small schema) cannot buy a long generation. An
answer cut off anyway is asked again with a larger budget."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from factstream.errors import LMConfigError
from factstream.lm.budget import CHARS_PER_TOKEN, first_budget, longest_constrained, retry_budget
from factstream.lm.fake import ScriptedLM
from factstream.lm.tasks import TaskRunner, extract_new_facts
from factstream.prompts import extract_facts
from factstream.prompts.models import Choice, DocumentView

WHEN = datetime(2010, 1, 22, tzinfo=UTC)
# 115 characters: the length of a typical CLARK-News document.
NEWS = (
    "The Queen will address the UN as the Head of State of the United Kingdom and 15 other "
    "United Nations member states."
)


async def _max_tokens(text: str, prompt: str = "extract_facts.v2") -> int:
    lm = ScriptedLM(['{"facts": [{"text": "The Queen will address the UN."}]}'])
    doc = DocumentView(text=text, timestamp=WHEN)
    await extract_new_facts(TaskRunner(lm), doc, prompt=prompt)
    (request,) = lm.requests
    return request.max_tokens


async def test_extraction_budget_follows_the_document() -> None:
    short, typical = await _max_tokens("Tiger Woods wins the Masters."), await _max_tokens(NEWS)
    long = await _max_tokens(" ".join([NEWS] * 3))
    assert short < typical < long
    # The budget is the schema's longest answer, a token a character: never cut off.
    for text, budget in [("Tiger Woods wins the Masters.", short), (NEWS, typical)]:
        ctx = extract_facts.ExtractFactsContext(document=DocumentView(text=text, timestamp=WHEN))
        assert budget == longest_constrained(extract_facts.V2.constraint(ctx)) + 1
    # A typical document's schema admits five facts, not the eight a long one may state.
    schema_only = extract_facts.ExtractFactsContext(
        document=DocumentView(text="x" * 1000, timestamp=WHEN)
    )
    assert typical < first_budget(longest_constrained(extract_facts.V2.constraint(schema_only)))


def test_a_short_document_gets_fewer_and_shorter_facts() -> None:
    ctx = extract_facts.ExtractFactsContext(
        document=DocumentView(text="Tiger Woods wins the Masters.", timestamp=WHEN)
    )
    assert ctx.facts_expected == 2 < extract_facts.DEFAULT_MAX_FACTS
    for prompt in (extract_facts.V1, extract_facts.V2):
        facts = prompt.constraint(ctx).schema["properties"]["facts"]
        assert facts["maxItems"] == ctx.facts_expected  # the budget follows the schema
    facts = extract_facts.V2.constraint(ctx).schema["properties"]["facts"]
    assert facts["items"]["properties"]["text"]["maxLength"] == 29 + 60 < 200
    time = facts["items"]["properties"]["time"]["anyOf"][0]
    assert time["maxLength"] == 29  # the time is words of the document


def test_budgets_from_the_longest_answer() -> None:
    assert first_budget(100) == 101  # a token per character: never cut off
    assert first_budget(100, 40) == 101  # the schema's bound, which follows the input
    assert first_budget(None, 40) == 40 // CHARS_PER_TOKEN + 1  # no schema bound
    assert first_budget(longest_constrained(Choice(("no", "yes")))) == 8  # the floor
    with pytest.raises(LMConfigError, match="unbounded"):
        first_budget(None, None)
    assert retry_budget(51, 100) == 101  # doubled, up to a token per character
    assert retry_budget(30, 100) == 60 and retry_budget(30, None) == 60
