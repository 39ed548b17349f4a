"""How the editor retrieves: the ``FACTSTREAM_EDITOR_RETRIEVAL_*`` settings as one value,
or a variant of them that ``eval update-retrieval`` scores (``retrieval.py`` runs it)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from factstream.config import EditorSettings

__all__ = ["Retrieval"]


@dataclass(frozen=True)
class Retrieval:
    """How the editor retrieves (the ``FACTSTREAM_EDITOR_*`` settings, or an eval variant)."""

    name: str
    top_k: int
    min_similarity: float
    alpha: float
    first_stage: int = 50
    names_query: bool = True
    sentences: int = 0  # up to this many sentence queries (0: none)
    rank: Literal["cosine", "hybrid", "rrf"] = "cosine"
    subject_lift: float = 0.3
    object_lift: float = 0.0
    short_names: bool = True  # surnames and acronyms count as naming an entity
    named_pass: bool = True  # named facts pass the floor
    structured: bool = True  # match the fact's subject/object fields (else its text only)
    title: bool = False  # also query with the title (or the source URL's words); names count
    relation_lift: float = 0.0  # for facts whose relation the document spells out
    floor_margin: float = 0.0  # > 0: unnamed facts also need the best cosine less this
    older_drop: float = 0.0  # off a fact with a newer one of its subject and relation pooled
    subject_cap: int = 0  # > 0: a subject's facts past this many rank after the others
    statement_lift: float = 0.0  # x the best cosine of a fact's predicate with a sentence
    speaker_names: bool = False  # another speaker's full name names no one else by surname
    given_names: bool = False  # a surname followed by a name word is someone's given name
    restated_drop: float = 0.0  # off a fact a sentence restates (its subject and object)
    restated_view: bool = False  # the drop only sorts the editor's view again
    title_lift: float = 0.0  # for facts whose subject the title names (besides subject_lift)
    filler_lift: float = 0.0  # for facts a sentence gives another object (fillers.py)
    full_names: bool = False  # a surname inside another full name the text spells names no one

    @classmethod
    def from_settings(cls, editor: EditorSettings) -> Retrieval:
        """The configured retrieval."""
        return cls(
            "configured",
            editor.top_k,
            editor.min_similarity,
            editor.alpha,
            first_stage=editor.retrieval_first_stage,
            names_query=editor.retrieval_names_query,
            sentences=editor.retrieval_sentences,
            rank=editor.retrieval_rank,
            subject_lift=editor.retrieval_subject_lift,
            object_lift=editor.retrieval_object_lift,
            short_names=editor.retrieval_short_names,
            title=editor.retrieval_title,
            relation_lift=editor.retrieval_relation_lift,
            floor_margin=editor.retrieval_floor_margin,
            older_drop=editor.retrieval_older_drop,
            subject_cap=editor.retrieval_subject_cap,
            statement_lift=editor.retrieval_statement_lift,
            speaker_names=editor.retrieval_speaker_names,
            given_names=editor.retrieval_given_names,
            restated_drop=editor.retrieval_restated_drop,
            restated_view=editor.retrieval_restated_view,
            title_lift=editor.retrieval_title_lift,
            filler_lift=editor.retrieval_filler_lift,
            full_names=editor.retrieval_full_names,
        )

    def but(self, name: str, **changes: object) -> Retrieval:
        """A variant of this retrieval."""
        return replace(self, name=name, **changes)  # type: ignore[arg-type]
