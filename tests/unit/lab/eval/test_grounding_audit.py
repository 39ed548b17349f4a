"""The audit of kept facts: stricter than the grounding check, on edits the editor made."""

from __future__ import annotations

from fixtures.decisions import Decisions
from fixtures.editing import Harness, doc

from factstream.topics.records import Document, FactEdit
from factstream_lab.eval.grounding_audit import audit_edits, audit_fact

TEXT = "Emmert is the president of the NCAA. The board met Myles Brand."
GOOD = "Emmert is the president of the NCAA."
SLIPS = [
    "NASA hired Emmert.",
    "The document's date is 2023-01-03.",
    "Emmert has 5 awards.",
    "The document is about Emmert.",
]


async def edited(grounding: bool, extract: list[str]) -> tuple[list[FactEdit], Document]:
    h = Harness(Decisions(extract={"NCAA": extract}), grounding=grounding)
    document = doc(TEXT, 3, "d1")
    return await h.feed(document), document


def flags_by_fact(edits: list[FactEdit], document: Document) -> dict[str, list[str]]:
    report = audit_edits(edits, {document.id: document})
    return {f.text: [flag.kind for flag in f.flags] for f in report.facts}


async def test_every_kind_of_slip_is_flagged_when_the_check_is_off() -> None:
    edits, document = await edited(False, [GOOD, *SLIPS])
    assert flags_by_fact(edits, document) == {
        GOOD: [],
        "NASA hired Emmert.": ["entity"],
        "The document's date is 2023-01-03.": ["prompt_text", "placeholder"],
        "Emmert has 5 awards.": ["number"],
        "The document is about Emmert.": ["placeholder"],
    }


async def test_the_check_keeps_none_of_the_slips() -> None:
    edits, document = await edited(True, [GOOD, *SLIPS])
    report = audit_edits(edits, {document.id: document})
    assert [f.text for f in report.facts] == [GOOD]
    assert report.to_json() == {
        "documents": 1,
        "documents_with_kept_facts": 1,
        "kept_facts": 1,
        "flagged_documents": 0,
        "flagged_facts": [],
    }


def test_a_name_with_digits_is_one_word() -> None:
    sources = ["Kay won the U23 title; autimatic joined T1."]
    assert audit_fact("The U23 title went to Kay.", sources, frozenset()) == []
    assert [f.detail for f in audit_fact("The U19 title went to Kay.", sources, frozenset())] == [
        "U19",
        "19",
    ]


async def test_the_audit_is_stricter_than_the_check() -> None:
    # A lone capitalised opener the document lacks: the check keeps it, the audit flags it.
    fact = "Elected by the board, Emmert is the president of the NCAA."
    edits, document = await edited(True, [fact])
    assert flags_by_fact(edits, document) == {fact: ["entity"]}


async def test_a_rewrite_may_draw_on_the_fact_it_replaced() -> None:
    decisions = Decisions(extract={"Brand led": ["Myles Brand led the NCAA."]})
    h = Harness(decisions, grounding=True)
    await h.feed(doc("Myles Brand led the NCAA.", 1, "d0"))
    decisions.extract = {}
    decisions.outdated = {"Brand led": "Emmert led the NCAA after Myles Brand."}
    document = doc("Emmert succeeded Brand at the NCAA.", 3, "d1")
    edits = await h.feed(document)
    assert [e.op.value for e in edits] == ["rewrite"]
    assert flags_by_fact(edits, document) == {"Emmert led the NCAA after Myles Brand.": []}
    without_old = [e.model_copy(update={"previous_text": None}) for e in edits]
    assert flags_by_fact(without_old, document) == {
        "Emmert led the NCAA after Myles Brand.": ["entity"]
    }
