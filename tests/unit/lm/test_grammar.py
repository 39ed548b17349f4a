"""The llama.cpp grammar written from a JSON schema: valid compact JSON only, no raw control
characters in strings, and the longest answer it admits is the budget's basis."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

import jsonschema
import pytest
from fixtures.gbnf_regex import grammar_regex

from factstream.lm.backends import gbnf_choice
from factstream.lm.grammar import SchemaUnsupported, json_schema_grammar, longest_answer
from factstream.prompts.models import DocumentView, JsonSchema
from factstream.prompts.registry import get_prompt, prompt_ids, sample_contexts

TEXT = {
    "type": "object",
    "properties": {"text": {"type": "string", "minLength": 1, "maxLength": 20}},
    "required": ["text"],
    "additionalProperties": False,
}
DOC = DocumentView(
    text="The Queen will address the UN as the Head of State of the United Kingdom.",
    timestamp=datetime(2010, 1, 22, tzinfo=UTC),
)


def admits(schema: dict[str, Any], answer: str) -> bool:
    return grammar_regex(json_schema_grammar(schema)).fullmatch(answer) is not None


@pytest.mark.parametrize("control", ["\n", "\t", "\r", "\x00", "\x1f", "\x7f"])
def test_a_raw_control_character_in_a_string_is_not_admitted(control: str) -> None:
    assert admits(TEXT, '{"text":"a b"}')
    assert not admits(TEXT, '{"text":"a' + control + 'b"}')


def test_escapes_are_admitted_and_count_as_one_character() -> None:
    assert admits(TEXT, r'{"text":"line\nnext \"q\" \\"}')
    assert admits(TEXT, '{"text":"' + "\\n" * 20 + '"}')
    assert not admits(TEXT, '{"text":"' + "\\n" * 21 + '"}')
    assert not admits(TEXT, r'{"text":"\u0041"}')  # the character itself, not its code


def test_lengths_items_and_keys_are_enforced_compactly() -> None:
    listed = {
        "type": "object",
        "properties": {
            "facts": {"type": "array", "items": TEXT["properties"]["text"], "maxItems": 2},
            "n": {"type": "integer", "minimum": 0, "maximum": 3},
            "ok": {"type": "boolean"},
        },
        "required": ["facts", "n", "ok"],
        "additionalProperties": False,
    }
    assert admits(listed, '{"facts":["a","b"],"n":3,"ok":true}')
    assert admits(listed, '{"facts":[],"n":0,"ok":false}')
    assert not admits(listed, '{"facts":["a","b","c"],"n":3,"ok":true}')  # maxItems
    assert not admits(listed, '{"facts":[""],"n":3,"ok":true}')  # minLength
    assert not admits(listed, '{"facts":["a"],"n":4,"ok":true}')  # maximum
    assert not admits(listed, '{"n":3,"facts":["a"],"ok":true}')  # the schema's order
    assert not admits(listed, '{"facts":["a"],"n":3,"ok":true,"x":1}')  # nothing else
    assert not admits(listed, '{"facts": ["a"], "n": 3, "ok": true}')  # no whitespace


def _longest_instance(schema: Any) -> Any:
    """The answer of most characters a schema of the supported forms admits."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return max(schema["enum"], key=lambda v: len(json.dumps(v)))
    if "anyOf" in schema:
        options = [_longest_instance(s) for s in schema["anyOf"]]
        return max(options, key=lambda v: len(json.dumps(v, separators=(",", ":"))))
    match schema["type"]:
        case "object":
            return {k: _longest_instance(s) for k, s in schema["properties"].items()}
        case "array" if "prefixItems" in schema:
            return [_longest_instance(s) for s in schema["prefixItems"]]
        case "array":
            return [_longest_instance(schema["items"])] * schema["maxItems"]
        case "string" if "pattern" in schema:
            body = schema["pattern"][1:-1]
            return re.sub(r"\[([^\]])[^\]]*\]\{(\d+)\}", lambda m: m[1] * int(m[2]), body)
        case "string":
            return "x" * schema["maxLength"]
        case "boolean":
            return False
        case "null":
            return None
    raise AssertionError(f"no instance for {schema}")


@pytest.mark.parametrize("prompt_id", prompt_ids())
def test_every_prompt_schema_becomes_a_grammar_admitting_its_longest_answer(
    prompt_id: str,
) -> None:
    prompt = get_prompt(prompt_id)
    ctx = sample_contexts(DOC, lambda role: f"The {role} text.")[prompt.name][0]
    constraint = prompt.constraint(ctx)
    if not isinstance(constraint, JsonSchema):
        return
    schema = dict(constraint.schema)
    longest = _longest_instance(schema)
    jsonschema.validate(longest, schema)
    answer = json.dumps(longest, ensure_ascii=False, separators=(",", ":"))
    assert grammar_regex(json_schema_grammar(schema)).fullmatch(answer)
    assert longest_answer(schema) == len(answer)


def test_a_choice_grammar_admits_its_options_only() -> None:
    pattern = grammar_regex(gbnf_choice(["reinforce", "no_change"]))
    assert pattern.fullmatch("no_change") and not pattern.fullmatch("no_change\n")


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({}, "admits any value"),
        ({"type": "string", "format": "email"}, "keywords \\['format'\\]"),
        (
            {"type": "object", "properties": {}, "additionalProperties": True},
            "additionalProperties false",
        ),
        ({"type": "string", "pattern": "^(a|b)$"}, "is not supported"),
        ({"type": "string", "pattern": "[0-9]"}, "not anchored"),
        ({"type": "string", "pattern": "^\\w+$"}, "is not supported"),
        ({"type": "array"}, "needs an items schema"),
        ({"type": "integer", "minimum": 0}, "minimum and maximum"),
        (
            {
                "type": "object",
                "properties": {"a": {"type": "null"}, "b": {"type": "null"}},
                "required": ["b"],
            },
            "optional 'a' before a required",
        ),
    ],
)
def test_a_schema_the_grammar_cannot_enforce_is_refused(schema: Any, problem: str) -> None:
    with pytest.raises(SchemaUnsupported, match=problem):
        json_schema_grammar(schema)


def test_unbounded_schemas_have_no_longest_answer() -> None:
    assert longest_answer({"type": "string"}) is None
    assert longest_answer({"type": "array", "items": {"type": "null"}}) is None
    assert longest_answer(TEXT) == len('{"text":""}') + 20
