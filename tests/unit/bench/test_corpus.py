"""The benchmark corpus: every fact the stub LM adds or rewrites to is grounded in its document.

The stub's answers come from its rules (bench.corpus.stub_rules) through the real prompts, as
the worker asks them, and the grounding check judges them as the editor does.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime

import pytest

from bench.corpus import DEFAULT_DATA, load, stream_documents, stub_rules
from factstream.edit.grounding import check_grounded
from factstream.prompts.extract_facts import ExtractFactsContext
from factstream.prompts.models import DocumentView
from factstream.prompts.registry import PROMPTS
from factstream.prompts.rewrite_fact import RewriteFactContext
from factstream.topics.records import Document
from factstream_lab.eval.datasets import Clark, ClarkDocument, Triple
from tests.fixtures.decisions import Decisions

EXTRACT, REWRITE = "extract_facts.v2", "rewrite_fact.v2"


def _user(prompt: str, ctx: object) -> str:
    return PROMPTS[prompt].messages(ctx)[-1].content


def _extracted(decisions: Decisions, view: DocumentView) -> list[str]:
    answer = decisions.answer(EXTRACT, _user(EXTRACT, ExtractFactsContext(document=view)))
    return [fact["text"] for fact in json.loads(answer)["facts"]]


def _rewrite(decisions: Decisions, view: DocumentView, fact: str) -> str | None:
    ctx = RewriteFactContext(document=view, fact=fact, change="update")
    found = json.loads(decisions.answer(REWRITE, _user(REWRITE, ctx)))["rewrite"]
    return None if found is None else str(found["text"])


def _view(doc: Document) -> DocumentView:
    return DocumentView(text=doc.text, timestamp=doc.timestamp, title=doc.title)


def _refusals(clark: Clark, docs: list[Document]) -> tuple[Counter[str], int, int]:
    """Refusal reasons of the stub's added and rewritten facts; facts added, rewrites."""
    decisions = Decisions.from_json(stub_rules(clark))
    refused: Counter[str] = Counter()
    added = rewritten = 0
    stale = [fact for rules in decisions.replace.values() for fact in rules]
    for doc in docs:
        view = _view(doc)
        for fact in _extracted(decisions, view):
            added += 1
            refusal = check_grounded(fact, view.body, date=view.timestamp)
            refused.update([refusal.reason] if refusal else [])
        for old in stale:
            if decisions.label(old, doc.text, v3=True) != "outdated":
                continue
            new = _rewrite(decisions, view, old)
            assert new is not None
            rewritten += 1
            refusal = check_grounded(new, view.body, old, date=view.timestamp)
            refused.update([refusal.reason] if refusal else [])
    return refused, added, rewritten


def _tiny() -> Clark:
    """Two excerpts naming Catherine as the articles do; the triples as Wikidata does."""
    first = ClarkDocument(
        "d1",
        "Prince William and the Duchess of Cambridge moved into Kensington Palace.",
        datetime(2011, 7, 19, tzinfo=UTC),
        0,
    )
    second = ClarkDocument(
        "d2",
        "The Prince and Princess of Wales are moving to Adelaide Cottage in Windsor.",
        datetime(2022, 8, 23, tzinfo=UTC),
        1,
    )
    subject = "Catherine, Princess of Wales"
    triples = [
        Triple(0, subject, "residence", "Kensington Palace", "2012-01-01", "d1"),
        Triple(1, subject, "residence", "Adelaide Cottage", "2022-01-01", "d2"),
    ]
    return Clark({"d1": first, "d2": second}, triples)


def test_the_bare_excerpt_does_not_ground_the_stubs_fact_and_the_stated_one_does() -> None:
    clark = _tiny()
    bare = stream_documents(clark, 2, ["ns"], stated=False)
    refused, added, _ = _refusals(clark, bare)
    assert added == 2
    assert refused == Counter(ungrounded_entity=1)  # "Princess" in the first document

    stated = stream_documents(clark, 2, ["ns"])
    refused, added, rewritten = _refusals(clark, stated)
    assert (added, rewritten, sum(refused.values())) == (2, 1, 0)
    assert stated[1].text.endswith("Catherine, Princess of Wales residence Adelaide Cottage.")


def test_a_stale_fact_is_outdated_only_in_the_document_that_reports_its_successor() -> None:
    clark = _tiny()
    decisions = Decisions.from_json(stub_rules(clark))
    first, second = stream_documents(clark, 2, ["ns"])
    stale = "Catherine, Princess of Wales residence Kensington Palace."
    assert decisions.label(stale, first.text, v3=True) == "no_change"
    assert decisions.label(stale, second.text, v3=True) == "outdated"
    assert _rewrite(decisions, _view(second), stale) == (
        "Catherine, Princess of Wales residence Adelaide Cottage."
    )


@pytest.mark.skipif(
    not (DEFAULT_DATA / "documents.jsonl").is_file(), reason=f"no CLARK-News at {DEFAULT_DATA}"
)
def test_every_fact_the_stub_adds_to_the_busy_namespace_is_grounded() -> None:
    clark = load(DEFAULT_DATA)
    refused, added, rewritten = _refusals(clark, stream_documents(clark, 300, ["busy"]))
    bare = stream_documents(clark, 300, ["busy"], stated=False)
    refused_bare, _, _ = _refusals(clark, bare)
    assert added > 300 and rewritten > 0
    assert refused == Counter(), refused
    assert sum(refused_bare.values()) > added / 2  # what the stated facts fix
