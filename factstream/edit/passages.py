"""A document cut into passages at sentence ends: what the rag baseline stores as facts."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["passages"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def passages(text: str, max_chars: int) -> list[str]:
    """Consecutive sentences joined up to ``max_chars``; a longer sentence is cut by words."""
    sentences = _SENTENCE_END.split(" ".join(text.split()))
    return _packed((piece for s in sentences for piece in _cut(s, max_chars)), max_chars)


def _cut(sentence: str, max_chars: int) -> list[str]:
    # A word longer than a passage (one unbroken token) goes in slices of max_chars.
    words = sentence.split()
    return _packed(
        (word[i : i + max_chars] for word in words for i in range(0, len(word), max_chars)),
        max_chars,
    )


def _packed(pieces: Iterable[str], max_chars: int) -> list[str]:
    """Consecutive pieces (none longer than ``max_chars``) joined by spaces up to it."""
    chunks: list[str] = []
    current = ""
    for piece in pieces:
        if current and len(current) + 1 + len(piece) > max_chars:
            chunks.append(current)
            current = piece
        else:
            current = f"{current} {piece}" if current else piece
    if current:
        chunks.append(current)
    return chunks
