"""A document cut into passages at sentence ends: what the rag baseline stores as facts."""

from __future__ import annotations

import re

__all__ = ["passages"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def passages(text: str, max_chars: int) -> list[str]:
    """Consecutive sentences joined up to ``max_chars``; a longer sentence is cut by words."""
    chunks: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(" ".join(text.split())):
        for piece in _cut(sentence, max_chars):
            if current and len(current) + 1 + len(piece) > max_chars:
                chunks.append(current)
                current = piece
            else:
                current = f"{current} {piece}" if current else piece
    if current:
        chunks.append(current)
    return chunks


def _cut(sentence: str, max_chars: int) -> list[str]:
    pieces, current = [], ""
    for word in sentence.split():
        while len(word) > max_chars:  # one unbroken token longer than a passage
            if current:
                pieces.append(current)
                current = ""
            pieces.append(word[:max_chars])
            word = word[max_chars:]
        if current and len(current) + 1 + len(word) > max_chars:
            pieces.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        pieces.append(current)
    return pieces
