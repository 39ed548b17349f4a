"""Request shaping per backend: which fields carry a constraint, and server-type detection."""

from __future__ import annotations

import pytest

from factstream.errors import LMConfigError
from factstream.lm.backends import (
    LlamaCppBackend,
    VLLMBackend,
    backend_from_models,
    gbnf_choice,
    vllm_api_for_version,
)
from factstream.lm.grammar import json_schema_grammar
from factstream.prompts.models import Choice, JsonSchema

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}


def test_vllm_json_schema_goes_in_response_format_json_schema() -> None:
    fields = VLLMBackend().constraint_fields(JsonSchema("thing", SCHEMA))
    assert fields == {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "thing", "schema": SCHEMA, "strict": True},
        }
    }


def test_vllm_choice_uses_structured_outputs_on_new_servers() -> None:
    fields = VLLMBackend("structured_outputs").constraint_fields(Choice(("yes", "no")))
    assert fields == {"structured_outputs": {"choice": ["yes", "no"]}}


def test_vllm_choice_uses_guided_choice_on_old_servers() -> None:
    assert VLLMBackend("guided").constraint_fields(Choice(("yes", "no"))) == {
        "guided_choice": ["yes", "no"]
    }


def test_llamacpp_json_schema_goes_in_grammar_as_our_gbnf() -> None:
    # Not response_format json_object: llama-cpp-python's own converter lets raw control
    # characters into strings (and it answers 500 to {"type": "json_schema"}).
    fields = LlamaCppBackend().constraint_fields(JsonSchema("thing", SCHEMA))
    assert fields == {"grammar": json_schema_grammar(SCHEMA)}
    assert "response_format" not in fields


def test_llamacpp_choice_is_a_grammar() -> None:
    fields = LlamaCppBackend().constraint_fields(Choice(("reinforce", "no_change")))
    assert fields == {"grammar": 'root ::= "reinforce" | "no_change"'}


@pytest.mark.parametrize("backend", [VLLMBackend(), LlamaCppBackend()])
def test_no_constraint_adds_no_fields(backend: VLLMBackend | LlamaCppBackend) -> None:
    assert backend.constraint_fields(None) == {}


def test_gbnf_choice_escapes_quotes_and_backslashes() -> None:
    assert gbnf_choice(['say "hi"', "a\\b"]) == 'root ::= "say \\"hi\\"" | "a\\\\b"'
    with pytest.raises(ValueError):
        gbnf_choice([])


@pytest.mark.parametrize(("owned_by", "expected"), [("vllm", "vllm"), ("me", "llamacpp")])
def test_backend_from_models(owned_by: str, expected: str) -> None:
    payload = {"data": [{"id": "m", "owned_by": owned_by}]}
    assert backend_from_models(payload) == expected


@pytest.mark.parametrize(
    "payload",
    [
        {"data": [{"id": "m", "owned_by": "openai"}]},
        {"data": []},
        {"data": [{"id": "a", "owned_by": "vllm"}, {"id": "b", "owned_by": "me"}]},
    ],
)
def test_backend_from_models_refuses_to_guess(payload: dict[str, object]) -> None:
    with pytest.raises(LMConfigError, match="FACTSTREAM_LM_BACKEND"):
        backend_from_models(payload)


@pytest.mark.parametrize(
    ("version", "api"),
    [
        ("0.6.3", "guided"),
        ("0.10.2", "guided"),
        ("0.11.0", "structured_outputs"),
        ("0.12.1", "structured_outputs"),
        ("v0.23.0rc1", "structured_outputs"),
        ("1.0.0", "structured_outputs"),
    ],
)
def test_vllm_api_for_version(version: str, api: str) -> None:
    assert vllm_api_for_version(version) == api


def test_vllm_api_for_unreadable_version() -> None:
    with pytest.raises(LMConfigError, match="VLLM_STRUCTURED_API"):
        vllm_api_for_version("dev")
