"""The facts the editing tasks return: text, valid interval, and structure where known."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from factstream.prompts.structured import StructuredFact, interval_or_default
from factstream.temporal import ValidInterval

__all__ = ["NewFact"]


@dataclass(frozen=True)
class NewFact:
    """A fact an LM stated (extracted or rewritten), ready to become an edit.

    Attributes:
        text: The fact, stripped.
        interval: When it held in the world, resolved in code against the document's event
            time (:func:`factstream.prompts.structured.fact_interval`).
        subject: The triple's subject, where the LM could tell (else all four are None).
        relation: The triple's relation.
        object: The triple's object.
        object_type: The object's type (person, organization, place, ...).
    """

    text: str
    interval: ValidInterval
    subject: str | None = None
    relation: str | None = None
    object: str | None = None
    object_type: str | None = None

    @classmethod
    def from_text(cls, text: str, event_time: datetime) -> NewFact:
        """A fact given as text alone (v1 prompts): its interval read from its words."""
        return cls.from_structured(StructuredFact(text=text), event_time)

    @classmethod
    def from_structured(cls, fact: StructuredFact, event_time: datetime) -> NewFact:
        """A structured fact (checked, or salvaged) with its interval resolved."""
        text = fact.text.strip()
        return cls(
            text=text,
            interval=interval_or_default(fact.model_copy(update={"text": text}), event_time),
            subject=_clean(fact.subject),
            relation=_clean(fact.relation),
            object=_clean(fact.object),
            object_type=fact.object_type,
        )


def _clean(part: str | None) -> str | None:
    return None if part is None else part.strip() or None
