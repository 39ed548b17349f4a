"""JsonFieldReader: the text top-level string fields gain as a JSON answer streams in."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from factstream.lm.json_fields import JsonFieldReader

ANSWER = {"reasoning": 'He said "yes",\nthen left \\ for Zürich 🚀', "answer": "Pearl River"}


def joined(pieces: list[str]) -> dict[str, str]:
    reader, text = JsonFieldReader(), {}
    for piece in pieces:
        for field, added in reader.feed(piece).items():
            text[field] = text.get(field, "") + added
    return text


def test_character_by_character_gives_each_fields_unescaped_text() -> None:
    raw = json.dumps(ANSWER)  # ensure_ascii: the emoji comes as a surrogate pair
    assert "\\ud83d" in raw
    assert joined(list(raw)) == ANSWER


def test_pieces_say_what_each_field_gained_in_order() -> None:
    reader = JsonFieldReader()
    assert reader.feed('{"reasoning": "Fro') == {"reasoning": "Fro"}
    assert reader.feed('m facts", "ans') == {"reasoning": "m facts"}
    assert reader.feed('wer": "Oslo"}') == {"answer": "Oslo"}


def test_keys_numbers_and_nested_values_add_nothing() -> None:
    raw = '{"n": 3, "inner": {"answer": "no"}, "list": ["x"], "answer": "yes"}'
    assert joined([raw]) == {"answer": "yes"}


@given(
    st.dictionaries(st.sampled_from(["reasoning", "answer"]), st.text(), min_size=1),
    st.lists(st.integers(min_value=1, max_value=7), min_size=1),
    st.booleans(),
)
def test_any_split_reads_the_same(fields: dict[str, str], sizes: list[int], ascii_: bool) -> None:
    raw = json.dumps(fields, ensure_ascii=ascii_)
    pieces, at = [], 0
    while at < len(raw):
        size = sizes[len(pieces) % len(sizes)]
        pieces.append(raw[at : at + size])
        at += size
    expected = {k: v for k, v in fields.items() if v}
    assert joined(pieces) == expected
