"""The real OpenAI-compatible LM server (llama.cpp, SmolLM2-135M): plain and JSON-constrained.

The 135M model is too small to be right; these tests check structure, not wisdom.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest
from openai import AsyncOpenAI

from factstream.config import Settings

LABEL_SCHEMA = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "enum": ["reinforce", "no_change", "make_false"]},
        "confidence": {"type": "integer", "minimum": 0, "maximum": 100},
    },
    "required": ["label", "confidence"],
}


@pytest.fixture
async def client(lm_settings: Settings) -> AsyncIterator[AsyncOpenAI]:
    lm = lm_settings.lm
    async with AsyncOpenAI(
        base_url=lm.url, api_key=lm.api_key.get_secret_value(), max_retries=0
    ) as client:
        yield client


async def test_chat_completion(client: AsyncOpenAI, lm_settings: Settings) -> None:
    reply = await client.chat.completions.create(
        model=lm_settings.lm.model,
        messages=[{"role": "user", "content": "Name one planet of the solar system."}],
        max_tokens=24,
        temperature=0.0,
    )
    assert (reply.choices[0].message.content or "").strip()
    assert reply.usage is not None
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0


@pytest.mark.parametrize(
    "fact",
    [
        "The Queen will address the nation on Christmas Day.",
        "Mike Lawler is a member of the New York State Assembly.",
        "The rocket launch was postponed.",
    ],
)
async def test_json_schema_constrained_completion(
    client: AsyncOpenAI, lm_settings: Settings, fact: str
) -> None:
    # llama.cpp's server takes the schema inside response_format json_object (json_schema: 500).
    reply = await client.chat.completions.create(
        model=lm_settings.lm.model,
        messages=[
            {"role": "system", "content": "Answer with JSON only."},
            {"role": "user", "content": f"Fact: {fact}\nDoes the news reinforce it?"},
        ],
        max_tokens=64,
        temperature=0.0,
        response_format={"type": "json_object", "schema": LABEL_SCHEMA},  # type: ignore[typeddict-unknown-key]
    )
    data = json.loads(reply.choices[0].message.content or "")
    assert set(data) == {"label", "confidence"}
    assert data["label"] in {"reinforce", "no_change", "make_false"}
    assert isinstance(data["confidence"], int) and 0 <= data["confidence"] <= 100


def test_models_endpoint_lists_the_configured_model(lm_settings: Settings) -> None:
    resp = httpx.get(f"{lm_settings.lm.url}/models", timeout=10)
    assert resp.status_code == 200
    assert lm_settings.lm.model in [m["id"] for m in resp.json()["data"]]
