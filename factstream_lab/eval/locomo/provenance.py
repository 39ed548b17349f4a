"""The turns a retrieved fact came from: the one place evidence recall reads provenance.

A turn passage cites its own turn (the map ``kb_turns.load_turns`` returns). An extracted
fact cites the turns it records (``Fact.turn_ids``, issue 38 item 2); a fact without them
(written before facts carried turn ids, or citing none) cites every turn of the document it
came from, its first history entry's: coarser, and marked so in the results ("document").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from factstream.topics.records import Fact

__all__ = ["Provenance"]


@dataclass(frozen=True)
class Provenance:
    """Where a fact's turns are read from.

    Attributes:
        facts: turns by fact id (a passage's own turn).
        documents: turns by document id (every turn of a conversation chunk).
    """

    facts: Mapping[str, tuple[str, ...]]
    documents: Mapping[str, tuple[str, ...]]

    def turns(self, fact: Fact) -> tuple[tuple[str, ...], str]:
        """The fact's turns, and how they are known: "passage", "turn" or "document"."""
        if fact.fact_id in self.facts:
            return self.facts[fact.fact_id], "passage"
        if fact.turn_ids:
            return tuple(fact.turn_ids), "turn"
        return self.documents.get(fact.history[0].document_id, ()), "document"
