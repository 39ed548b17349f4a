"""LM answers are checked against the lengths their schemas state (a server may ignore them)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from factstream.prompts import extract_facts, rewrite_fact
from factstream.prompts.models import ConstraintBroken, DocumentView

DOC = DocumentView(text="News.", timestamp=datetime(2024, 1, 1, tzinfo=UTC))


def test_an_extracted_fact_longer_than_the_schema_allows_is_refused() -> None:
    long_doc = DOC.model_copy(update={"text": "News. " * 30})
    ctx = extract_facts.ExtractFactsContext(document=long_doc, max_facts=3)
    extract_facts.check_facts(ctx, extract_facts.ExtractedFacts(facts=["x" * 200]))
    with pytest.raises(ConstraintBroken, match="a fact of 201 characters; at most 200"):
        extract_facts.check_facts(ctx, extract_facts.ExtractedFacts(facts=["ok", "x" * 201]))


def test_a_short_document_allows_shorter_facts() -> None:
    # "News." (5 characters): a fact is its words and the names it resolves (60 more).
    ctx = extract_facts.ExtractFactsContext(document=DOC, max_facts=3)
    extract_facts.check_facts(ctx, extract_facts.ExtractedFacts(facts=["x" * 65]))
    with pytest.raises(ConstraintBroken, match="a fact of 66 characters; at most 65"):
        extract_facts.check_facts(ctx, extract_facts.ExtractedFacts(facts=["x" * 66]))


def test_a_rewrite_longer_than_the_schema_allows_is_refused() -> None:
    ctx = rewrite_fact.RewriteFactContext(document=DOC, fact="The ferry runs.")
    rewrite_fact.check_rewrite(ctx, rewrite_fact.Rewrite(rewrite="y" * 300))
    with pytest.raises(ConstraintBroken, match="a rewrite of 301 characters"):
        rewrite_fact.check_rewrite(ctx, rewrite_fact.Rewrite(rewrite="y" * 301))
