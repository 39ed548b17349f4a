"""How the editor retrieves: its stages and their weights as one value (``retrieval.py`` runs it).

An operator turns ``top_k``, ``min_similarity`` and ``alpha`` (``FACTSTREAM_EDITOR_*``); the
stages below are the retrieval's own defaults, the ones ``eval update-retrieval`` chose on the
CLARK-News development split (docs/evaluation.md). The evaluation scores variants of them
(``Retrieval.but``); a deployment does not tune them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from factstream.config import EditorSettings

__all__ = ["Retrieval"]


@dataclass(frozen=True)
class Retrieval:
    """How the editor retrieves (the configured retrieval, or an evaluation's variant)."""

    name: str
    top_k: int
    min_similarity: float
    alpha: float
    # Facts each retrieval query returns before the rerank that keeps top_k (0: the store's
    # plain hybrid search, no rerank).
    first_stage: int = 50
    # Also a BM25 query on the names the document contains. Off (issue 37): on every
    # development set (CLARK-News as streamed and edited, the world's seeds 1 and 2) each
    # stale fact ranked the same without it, and it cost a search per document.
    names_query: bool = False
    sentences: int = 0  # up to this many sentence queries (0: none)
    # rerank by cosine with the document, the store's hybrid score, or reciprocal rank
    rank: Literal["cosine", "hybrid", "rrf"] = "cosine"
    subject_lift: float = 0.3  # for facts whose subject the document names (they pass the floor)
    object_lift: float = 0.1  # for facts whose object the document names in full
    short_names: bool = True  # surnames and acronyms count as naming an entity (Emmert, NCAA)
    named_pass: bool = True  # named facts pass the floor
    structured: bool = True  # match the fact's subject/object fields (else its text only)
    title: bool = True  # also query with the title (or the source URL's words); names count
    relation_lift: float = 0.3  # for facts whose relation the document spells out
    floor_margin: float = 0.0  # > 0: unnamed facts also need the best cosine less this
    older_drop: float = 0.2  # off a fact with a newer one of its subject and relation pooled
    subject_cap: int = 5  # > 0: a subject's facts past this many rank after the others
    statement_lift: float = 2.0  # x the best cosine of a fact's predicate with a sentence
    speaker_names: bool = True  # another speaker's full name names no one else by surname
    given_names: bool = False  # a surname followed by a name word is someone's given name
    restated_drop: float = 0.2  # off a fact a sentence restates (its subject and object)
    restated_view: bool = True  # the drop only sorts the editor's view again
    title_lift: float = 0.0  # for facts whose subject the title names (besides subject_lift)
    filler_lift: float = 1.0  # for facts a sentence gives another object (fillers.py)
    full_names: bool = False  # a surname inside another full name the text spells names no one

    @classmethod
    def from_settings(cls, editor: EditorSettings) -> Retrieval:
        """The configured retrieval: the operator's settings, the stages' own defaults."""
        return cls("configured", editor.top_k, editor.min_similarity, editor.alpha)

    def but(self, name: str, **changes: object) -> Retrieval:
        """A variant of this retrieval."""
        return replace(self, name=name, **changes)  # type: ignore[arg-type]
