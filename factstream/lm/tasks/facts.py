"""The facts the editing tasks return: text, valid interval, and structure where known."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from factstream.prompts.structured import StructuredFact, interval_or_default
from factstream.temporal import ValidInterval

__all__ = ["FactStructure", "NewFact"]


@dataclass(frozen=True)
class FactStructure:
    """A fact as a triple, and the type of its object (person, organization, place, ...)."""

    subject: str
    relation: str
    object: str
    object_type: str

    @classmethod
    def of(cls, fact: StructuredFact) -> FactStructure | None:
        """The structure of a checked (or salvaged) fact; None where it has none."""
        parts = (fact.subject, fact.relation, fact.object, fact.object_type)
        cleaned = [part.strip() if part else "" for part in parts]
        return cls(*cleaned) if all(cleaned) else None


@dataclass(frozen=True)
class NewFact:
    """A fact an LM stated (extracted or rewritten), ready to become an edit.

    Attributes:
        text: The fact, stripped.
        interval: When it held in the world, resolved in code against the document's event
            time (:func:`factstream.prompts.structured.fact_interval`).
        structure: Its triple, where the LM could tell.
    """

    text: str
    interval: ValidInterval
    structure: FactStructure | None = None

    @classmethod
    def from_text(cls, text: str, event_time: datetime) -> NewFact:
        """A fact given as text alone (v1 prompts): its interval read from its words."""
        return cls.from_structured(StructuredFact(text=text), event_time)

    @classmethod
    def from_structured(cls, fact: StructuredFact, event_time: datetime) -> NewFact:
        """A structured fact (checked, or salvaged) with its interval resolved."""
        text = fact.text.strip()
        interval = interval_or_default(fact.model_copy(update={"text": text}), event_time)
        return cls(text, interval, FactStructure.of(fact))
