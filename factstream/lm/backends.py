"""How each supported server takes structured output: the request fields, made explicit.

Both servers ignore request fields they do not know (HTTP 200, unconstrained output), so a
constraint sent in the wrong field is dropped silently. Each backend therefore states exactly
which fields carry a constraint, and tests pin the request body byte for byte.

- vLLM (``vllm serve``): JSON schemas go in the standard ``response_format``
  ``{"type": "json_schema", ...}``, which every vLLM version with structured outputs reads.
  Choices go in ``structured_outputs: {"choice": [...]}`` (vLLM >= 0.11; the older
  ``guided_choice`` was deprecated in 0.10.2 and removed in 0.12).
- llama.cpp (llama-cpp-python's server, or llama.cpp's own): JSON schemas go in its
  ``grammar`` field as the GBNF grammar :mod:`factstream.lm.grammar` writes, choices as GBNF
  alternatives. Not ``response_format {"type": "json_object", "schema": ...}``:
  llama-cpp-python converts that schema with string characters ``[^"\\]``, which admit raw
  control characters no JSON parser reads (and it answers 500 to ``json_schema``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from factstream.errors import LMConfigError
from factstream.lm.grammar import json_schema_grammar
from factstream.prompts.models import Choice, Constraint, JsonSchema

__all__ = [
    "VLLM_STRUCTURED_OUTPUTS_SINCE",
    "Backend",
    "BackendName",
    "LlamaCppBackend",
    "VLLMBackend",
    "VLLMStructuredAPI",
    "backend_from_models",
    "gbnf_choice",
    "vllm_api_for_version",
]

BackendName = Literal["vllm", "llamacpp"]
VLLMStructuredAPI = Literal["structured_outputs", "guided"]

# Both field families are accepted from 0.10.2 until 0.12 removed guided_*; 0.11 is inside.
VLLM_STRUCTURED_OUTPUTS_SINCE = (0, 11)

# What /v1/models says in owned_by: vLLM writes "vllm"; llama-cpp-python hard-codes "me".
_OWNED_BY: dict[str, BackendName] = {"vllm": "vllm", "me": "llamacpp"}


class Backend(Protocol):
    """Request shaping for one server type."""

    @property
    def name(self) -> str:
        """Backend name for logs (``vllm``, ``llamacpp``)."""
        ...

    def constraint_fields(self, constraint: Constraint | None) -> dict[str, Any]:
        """The body fields that make the server enforce ``constraint`` (empty for None)."""
        ...


@dataclass(frozen=True)
class VLLMBackend:
    """vLLM's OpenAI-compatible server."""

    structured_api: VLLMStructuredAPI = "structured_outputs"

    @property
    def name(self) -> str:
        return "vllm"

    def constraint_fields(self, constraint: Constraint | None) -> dict[str, Any]:
        match constraint:
            case None:
                return {}
            case JsonSchema(name=name, schema=schema):
                return {
                    "response_format": {
                        "type": "json_schema",
                        "json_schema": {"name": name, "schema": dict(schema), "strict": True},
                    }
                }
            case Choice(options=options):
                if self.structured_api == "structured_outputs":
                    return {"structured_outputs": {"choice": list(options)}}
                return {"guided_choice": list(options)}
        raise TypeError(f"unknown constraint {constraint!r}")  # pragma: no cover


@dataclass(frozen=True)
class LlamaCppBackend:
    """llama.cpp's OpenAI-compatible server (``python -m llama_cpp.server``, ``llama-server``)."""

    @property
    def name(self) -> str:
        return "llamacpp"

    def constraint_fields(self, constraint: Constraint | None) -> dict[str, Any]:
        match constraint:
            case None:
                return {}
            case JsonSchema(schema=schema):
                return {"grammar": json_schema_grammar(schema)}
            case Choice(options=options):
                return {"grammar": gbnf_choice(options)}
        raise TypeError(f"unknown constraint {constraint!r}")  # pragma: no cover


def gbnf_choice(options: Sequence[str]) -> str:
    """A GBNF grammar whose only sentences are ``options``."""
    if not options:
        raise ValueError("a choice needs at least one option")
    # JSON string escaping is valid GBNF literal escaping for quotes, backslashes, newlines.
    return "root ::= " + " | ".join(json.dumps(option) for option in options)


def backend_from_models(payload: Mapping[str, Any]) -> BackendName:
    """Tell the server type from a /v1/models answer, or raise LMConfigError.

    Args:
        payload: The decoded JSON of ``GET /v1/models``.
    """
    owners = {str(m.get("owned_by")) for m in payload.get("data", []) if isinstance(m, Mapping)}
    kinds = {_OWNED_BY[o] for o in owners if o in _OWNED_BY}
    if len(kinds) == 1 and len(owners) == 1:
        return kinds.pop()
    raise LMConfigError(
        f"cannot tell the LM server type from /v1/models (owned_by: {sorted(owners)}); "
        "set FACTSTREAM_LM_BACKEND to vllm or llamacpp"
    )


def vllm_api_for_version(version: str) -> VLLMStructuredAPI:
    """Which choice field a vLLM server of ``version`` (from GET /version) reads."""
    match = re.match(r"v?(\d+)\.(\d+)", version.strip())
    if match is None:
        raise LMConfigError(
            f"cannot read the vLLM version {version!r}; "
            "set FACTSTREAM_LM_VLLM_STRUCTURED_API to structured_outputs or guided"
        )
    found = (int(match.group(1)), int(match.group(2)))
    return "structured_outputs" if found >= VLLM_STRUCTURED_OUTPUTS_SINCE else "guided"
