"""Which turns a retrieved fact cites: a passage's own, a fact's turn ids, else its document's."""

from __future__ import annotations

from datetime import UTC, datetime

from factstream.topics.records import Fact, HistoryEntry
from factstream_lab.eval.locomo.provenance import Provenance

T = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def _fact(fact_id: str, turn_ids: list[str] | None) -> Fact:
    entry = HistoryEntry(ts=T, truth=True, document_id="locomo-26-s1-c1", edit_id=f"e-{fact_id}")
    return Fact(
        fact_id=fact_id,
        namespace="ns",
        text="Caroline went to a support group.",
        truth=True,
        history=[entry],
        first_seen=T,
        last_changed=T,
        turn_ids=turn_ids,
    )


def test_each_fact_cites_the_finest_turns_it_has() -> None:
    provenance = Provenance({"passage": ("D1:3",)}, {"locomo-26-s1-c1": ("D1:1", "D1:2", "D1:3")})
    assert provenance.turns(_fact("passage", None)) == (("D1:3",), "passage")
    assert provenance.turns(_fact("cited", ["D1:2"])) == (("D1:2",), "turn")
    assert provenance.turns(_fact("older", None)) == (("D1:1", "D1:2", "D1:3"), "document")
    assert Provenance({}, {}).turns(_fact("unknown", None)) == ((), "document")
