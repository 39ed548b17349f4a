"""Slips of the default model past the first grounding check, held by the real prompt texts.

SmolLM2 copied the extraction prompt's dated sentence ("The document's date is ..."),
wrote "the document" where the fact's subject belongs and opened facts with acronyms no
document has; each is refused here, with the prompt rendered as the editor renders it.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from factstream.config import EditorSettings
from factstream.edit.grounding import MIN_PROMPT_WORDS, check_grounded
from factstream.prompts import extract_facts, rewrite_fact
from factstream.prompts.models import DocumentView
from factstream.prompts.registry import PROMPTS

DOCUMENT = "Emmert is the president of the NCAA."
DAY = datetime(2011, 2, 14, tzinfo=UTC)
VIEW = DocumentView(text=DOCUMENT, timestamp=DAY)
SETTINGS = EditorSettings()


def reason(fact: str, document: str = DOCUMENT, old: str | None = None) -> str | None:
    refusal = check_grounded(fact, document, old, date=DAY)
    return None if refusal is None else refusal.reason


def rendered(prompt_id: str, ctx: object) -> list[str]:
    """The sentences of the messages ``prompt_id`` sends for ``ctx``, outside the data."""
    text = "\n".join(m.content for m in PROMPTS[prompt_id].messages(ctx))
    outside = re.sub(r"<(\w+)[^>]*>\n.*?\n</\1>", "\n", text, flags=re.S)
    return [s for s in re.split(r"(?<=[.:])\s+|\n", outside) if s.strip()]


def dated(sentences: list[str]) -> list[str]:
    return [s for s in sentences if VIEW.date in s and len(s.split()) >= MIN_PROMPT_WORDS - 2]


def test_the_extraction_prompts_dated_sentence_is_refused() -> None:
    ctx = extract_facts.ExtractFactsContext(document=VIEW)
    sentences = dated(rendered(SETTINGS.extract_prompt, ctx))
    assert sentences == ["The document's date is 2011-02-14."]
    assert [reason(s) for s in sentences] == ["prompt_text"]
    # With the rest of the prompt's sentence, and with another date.
    assert reason("The document's date is 2011-02-14. List at most 8 facts it states.") == (
        "prompt_text"
    )
    assert reason("The document's date is 2011-02-14, and Emmert is the NCAA president.") == (
        "prompt_text"
    )


@pytest.mark.parametrize("change", [None, "update", "correction"])
def test_the_rewrite_prompts_dated_sentences_are_refused(change: str | None) -> None:
    old = "Brand is the president of the NCAA."
    ctx = rewrite_fact.RewriteFactContext(
        document=VIEW,
        fact=old,
        true_facts=(),
        change=change,  # type: ignore[arg-type]
    )
    sentences = dated(rendered(SETTINGS.rewrite_prompt, ctx))
    assert sentences, "the rewrite prompt shows the document's date"
    assert {s: reason(s, old=old) for s in sentences} == dict.fromkeys(sentences, "prompt_text")


def test_a_date_in_a_prompt_sentence_is_any_date() -> None:
    other = "The document's date is 1999-12-31."
    refusal = check_grounded(other, "It was 1999-12-31 when the document's date is set.")
    assert refusal is not None and refusal.reason == "prompt_text"


def test_a_documents_own_dated_sentence_is_its_text() -> None:
    document = "Other facts true as of 2011-02-14 were listed by the NCAA."
    assert reason("Other facts true as of 2011-02-14 were listed by the NCAA.", document) is None


@pytest.mark.parametrize(
    "fact",
    [
        "The document is about the NCAA.",
        "The document states that Emmert is the president of the NCAA.",
        "This article says Emmert is the president of the NCAA.",
        "Emmert is mentioned in the document.",
    ],
)
def test_the_document_as_a_subject_is_a_placeholder(fact: str) -> None:
    assert reason(fact) == "placeholder"


def test_a_document_that_talks_of_a_document_may_be_quoted() -> None:
    document = "The document was signed by Emmert."
    assert reason("The document was signed by Emmert.", document) is None


@pytest.mark.parametrize("fact", ["NASA.", "NBA is the league Emmert runs.", "FIFA hired Emmert."])
def test_an_acronym_opening_a_fact_is_checked(fact: str) -> None:
    assert reason(fact) == "ungrounded_entity"


@pytest.mark.parametrize(
    "fact",
    [
        "NCAA president is Emmert.",
        "NCAA.",
        # Spelled out in the document: the initials count.
        "UN members heard the Queen.",
    ],
)
def test_an_acronym_opening_a_fact_in_the_document_passes(fact: str) -> None:
    document = f"{DOCUMENT} The Queen addressed the United Nations."
    assert reason(fact, document) is None


def test_a_capitalised_common_word_opening_a_fact_is_still_no_name() -> None:
    assert reason("Founded in the past, the NCAA has a president.") is None


@pytest.mark.parametrize("prompt_id", [SETTINGS.extract_prompt, SETTINGS.rewrite_prompt])
def test_the_default_prompts_quote_no_sentence_a_model_could_echo(prompt_id: str) -> None:
    if prompt_id.startswith("extract"):
        ctx: object = extract_facts.ExtractFactsContext(document=VIEW)
    else:
        ctx = rewrite_fact.RewriteFactContext(document=VIEW, fact="Brand leads the NCAA.")
    text = "\n".join(m.content for m in PROMPTS[prompt_id].messages(ctx))
    quoted = re.findall(r'"([^"]*)"', text)
    assert quoted, "the prompts name their JSON fields in quotes"
    # Field names, short phrases, time-word patterns ("from ... to ..."): no sentence.
    assert [q for q in quoted if len(re.findall(r"[^\W\d_]+", q)) > 3] == []


@pytest.mark.parametrize(
    "fact",
    [
        # The default model's rewrite in the demo of 25 November 2026, shortened.
        "The fact that Emmert is the president of the NCAA. This is not true, but the facts "
        "are: Emmert leads the NCAA",
        "The facts are: Emmert is the president of the NCAA.",
        "Emmert is the president of the NCAA. That is no longer the case.",
        "It is true that Emmert is the president of the NCAA.",
        # The demo of 25 November 2026, 16:30 UTC, shortened.
        "Emmert is the president of the NCAA. This fact was never true.",
    ],
)
def test_talk_about_facts_is_a_placeholder(fact: str) -> None:
    assert reason(fact) == "placeholder"


def test_a_document_that_says_it_is_not_true_may_be_quoted() -> None:
    document = "Emmert said the report is false: this is not true, he told the NCAA."
    assert reason("Emmert said this is not true.", document) is None
