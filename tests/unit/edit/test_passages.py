"""Passages for the rag baseline: sentences packed up to a length, nothing lost."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from factstream.edit.passages import passages


def test_sentences_are_packed_and_never_split_when_they_fit() -> None:
    text = "One two three. Four five six! Seven eight?  Nine."
    assert passages(text, 30) == ["One two three. Four five six!", "Seven eight? Nine."]
    assert passages(text, 1000) == ["One two three. Four five six! Seven eight? Nine."]


def test_a_long_word_is_cut() -> None:
    assert passages("a " + "x" * 25, 10) == ["a", "x" * 10, "x" * 10, "x" * 5]


@given(st.text(max_size=400), st.integers(min_value=5, max_value=60))
def test_no_text_lost_and_bounds_kept(text: str, limit: int) -> None:
    chunks = passages(text, limit)
    assert all(0 < len(c) <= limit for c in chunks)
    assert "".join("".join(chunks).split()) == "".join(text.split())
