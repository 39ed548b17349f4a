"""The response cache: keyed by model, messages, constraint and parameters; on disk."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from prometheus_client import CollectorRegistry

from factstream.lm.base import CompletionRequest, Usage
from factstream.lm.cache import CachingLM, SQLiteLMCache, cache_key
from factstream.lm.fake import ScriptedLM
from factstream.metrics import LMMetrics
from factstream.prompts.models import Choice, JsonSchema, Message

REQUEST = CompletionRequest(
    messages=(Message(role="user", content="hello"),),
    task="t",
    prompt="t.v1",
    constraint=JsonSchema("x", {"type": "object"}),
)


def test_key_changes_with_everything_that_decides_the_answer() -> None:
    base = cache_key("m", REQUEST)
    variants = [
        cache_key("other-model", REQUEST),
        cache_key("m", replace(REQUEST, messages=(Message(role="user", content="hello!"),))),
        cache_key("m", replace(REQUEST, constraint=JsonSchema("x", {"type": "array"}))),
        cache_key("m", replace(REQUEST, constraint=Choice(("a", "b")))),
        cache_key("m", replace(REQUEST, constraint=None)),
        cache_key("m", replace(REQUEST, max_tokens=7)),
        cache_key("m", replace(REQUEST, temperature=0.5)),
    ]
    assert base not in variants
    assert len(set(variants)) == len(variants)
    # Labels for metrics and records do not change the answer.
    assert cache_key("m", replace(REQUEST, task="u", prompt="u.v2", use_cache=False)) == base


async def test_second_call_is_served_from_disk(tmp_path: Path) -> None:
    registry = CollectorRegistry()
    metrics = LMMetrics.create(registry)
    inner = ScriptedLM(["first answer"])
    lm = CachingLM(inner, SQLiteLMCache(tmp_path / "c.sqlite"), metrics)
    first = await lm.complete(REQUEST)
    second = await lm.complete(REQUEST)
    assert (first.text, first.cached) == ("first answer", False)
    assert (second.text, second.cached) == ("first answer", True)
    assert second.usage == first.usage
    assert len(inner.requests) == 1
    assert (
        registry.get_sample_value(
            "factstream_lm_cache_hits_total", {"task": "t", "model": "scripted"}
        )
        == 1.0
    )
    labels = {"task": "t", "model": "scripted"}
    for kind, spent in (
        ("prompt", first.usage.prompt_tokens),
        ("completion", first.usage.completion_tokens),
    ):
        assert spent > 0
        assert registry.get_sample_value(
            "factstream_lm_cached_tokens_total", {**labels, "kind": kind}
        ) == float(spent)
    await lm.aclose()
    assert inner.closed

    # A new process (new connection) sees the same answer.
    again = CachingLM(ScriptedLM([]), SQLiteLMCache(tmp_path / "c.sqlite"))
    assert (await again.complete(REQUEST)).text == "first answer"
    await again.aclose()


async def test_use_cache_false_bypasses_and_does_not_store(tmp_path: Path) -> None:
    cache = SQLiteLMCache(tmp_path / "c.sqlite")
    inner = ScriptedLM(["a", "b"])
    lm = CachingLM(inner, cache)
    off = replace(REQUEST, use_cache=False)
    assert (await lm.complete(off)).text == "a"
    assert (await lm.complete(off)).text == "b"
    assert len(cache) == 0
    await lm.aclose()


def test_cache_round_trips_usage_and_finish_reason(tmp_path: Path) -> None:
    from factstream.lm.base import Completion

    cache = SQLiteLMCache(tmp_path / "c.sqlite")
    cache.put("k", "p.v1", Completion("txt", Usage(5, 2), "m", "length"))
    cache.put("k", "p.v1", Completion("other", Usage(1, 1), "m", "stop"))  # first one wins
    hit = cache.get("k")
    assert hit == Completion("txt", Usage(5, 2), "m", "length", cached=True)
    assert cache.get("missing") is None
    cache.close()
