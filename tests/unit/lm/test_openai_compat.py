"""OpenAICompatLM against a scripted HTTP transport: exact bodies, retries, outages, tokens."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2
import pytest
from prometheus_client import CollectorRegistry

from factstream.config import LMSettings
from factstream.errors import LMConfigError, LMRequestRejected, LMServerError, LMUnavailable
from factstream.lm.backends import LlamaCppBackend, VLLMBackend
from factstream.lm.base import CompletionRequest
from factstream.lm.grammar import json_schema_grammar
from factstream.lm.openai_compat import OpenAICompatLM
from factstream.metrics import LMMetrics
from factstream.prompts.models import Choice, JsonSchema, Message

URL = "http://lm.test/v1"
SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
Handler = Callable[[httpx2.Request], httpx2.Response]


def reply(content: str, prompt_tokens: int = 11, completion_tokens: int = 3) -> httpx2.Response:
    return httpx2.Response(
        200,
        json={
            "id": "c1",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        },
    )


def models(owned_by: str) -> httpx2.Response:
    return httpx2.Response(
        200, json={"object": "list", "data": [{"id": "m", "owned_by": owned_by}]}
    )


class Server:
    """A scripted server: records requests; ``routes`` maps 'METHOD path' to handlers."""

    def __init__(self) -> None:
        self.requests: list[httpx2.Request] = []
        self.chat: list[Handler | httpx2.Response | Exception] = []
        self.routes: dict[str, Handler] = {}

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        route = f"{request.method} {request.url.path}"
        if route in self.routes:
            return self.routes[route](request)
        if route == "POST /v1/chat/completions":
            step = self.chat.pop(0) if len(self.chat) > 1 else self.chat[0]
            if isinstance(step, Exception):
                raise step
            return step if isinstance(step, httpx2.Response) else step(request)
        return httpx2.Response(404, json={"error": route})

    def bodies(self) -> list[dict[str, Any]]:
        return [
            json.loads(r.content) for r in self.requests if r.url.path == "/v1/chat/completions"
        ]


def make_lm(
    server: Server, *, force: Any = None, **overrides: Any
) -> tuple[OpenAICompatLM, CollectorRegistry]:
    settings = LMSettings(
        url=URL,
        model="m",
        backoff_s=0.001,
        backoff_max_s=0.01,
        probe_interval_s=0.01,
        **overrides,
    )
    registry = CollectorRegistry()
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(server))
    lm = OpenAICompatLM(settings, LMMetrics.create(registry), http_client=client, backend=force)
    return lm, registry


def request(constraint: Any = None, task: str = "t") -> CompletionRequest:
    return CompletionRequest(
        messages=(Message(role="system", content="s"), Message(role="user", content="u")),
        task=task,
        prompt=f"{task}.v1",
        constraint=constraint,
        max_tokens=50,
    )


BASE_BODY = {
    "model": "m",
    "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}],
    "max_tokens": 50,
    "temperature": 0.0,
}


@pytest.mark.parametrize(
    ("backend", "constraint", "extra"),
    [
        (
            LlamaCppBackend(),
            JsonSchema("x", SCHEMA),
            {"grammar": json_schema_grammar(SCHEMA)},
        ),
        (LlamaCppBackend(), Choice(("a", "b")), {"grammar": 'root ::= "a" | "b"'}),
        (
            VLLMBackend("structured_outputs"),
            JsonSchema("x", SCHEMA),
            {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "x", "schema": SCHEMA, "strict": True},
                }
            },
        ),
        (
            VLLMBackend("structured_outputs"),
            Choice(("a", "b")),
            {"structured_outputs": {"choice": ["a", "b"]}},
        ),
        (VLLMBackend("guided"), Choice(("a", "b")), {"guided_choice": ["a", "b"]}),
        (LlamaCppBackend(), None, {}),
    ],
)
async def test_exact_request_body(backend: Any, constraint: Any, extra: dict[str, Any]) -> None:
    server = Server()
    server.chat = [reply('{"a": 1}')]
    lm, _ = make_lm(server, force=backend)
    await lm.complete(request(constraint))
    await lm.aclose()
    assert server.bodies() == [{**BASE_BODY, **extra}]


async def test_auto_detects_llamacpp_from_models() -> None:
    server = Server()
    server.routes["GET /v1/models"] = lambda _r: models("me")
    server.chat = [reply("a")]
    lm, _ = make_lm(server)
    await lm.complete(request(Choice(("a", "b"))))
    await lm.complete(request(Choice(("a", "b"))))
    await lm.aclose()
    assert isinstance(lm.backend, LlamaCppBackend)
    assert [r.url.path for r in server.requests].count("/v1/models") == 1  # detected once
    assert server.bodies()[0]["grammar"] == 'root ::= "a" | "b"'


@pytest.mark.parametrize(
    ("version", "field"), [("0.10.1", "guided_choice"), ("0.12.0", "structured_outputs")]
)
async def test_auto_detects_vllm_and_its_choice_field(version: str, field: str) -> None:
    server = Server()
    server.routes["GET /v1/models"] = lambda _r: models("vllm")
    server.routes["GET /version"] = lambda _r: httpx2.Response(200, json={"version": version})
    server.chat = [reply("a")]
    lm, _ = make_lm(server)
    await lm.complete(request(Choice(("a", "b"))))
    await lm.aclose()
    assert isinstance(lm.backend, VLLMBackend)
    assert field in server.bodies()[0]


async def test_explicit_settings_skip_detection() -> None:
    server = Server()
    server.chat = [reply("a")]
    lm, _ = make_lm(server, backend="vllm", vllm_structured_api="guided")
    await lm.complete(request(Choice(("a", "b"))))
    await lm.aclose()
    assert lm.backend == VLLMBackend("guided")
    assert [r.url.path for r in server.requests] == ["/v1/chat/completions"]


async def test_unknown_server_type_is_an_error_not_a_guess() -> None:
    server = Server()
    server.routes["GET /v1/models"] = lambda _r: models("someone-else")
    lm, _ = make_lm(server)
    with pytest.raises(LMConfigError):
        await lm.complete(request())
    await lm.aclose()


async def test_tokens_are_counted_per_task() -> None:
    server = Server()
    server.chat = [reply("x", prompt_tokens=20, completion_tokens=4)]
    lm, registry = make_lm(server, force=LlamaCppBackend())
    first = await lm.complete(request(task="classify_facts"))
    await lm.complete(request(task="classify_facts"))
    await lm.aclose()
    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (20, 4)

    def sample(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, {"task": "classify_facts", "model": "m", **labels})

    assert sample("factstream_lm_tokens_total", kind="prompt") == 40
    assert sample("factstream_lm_tokens_total", kind="completion") == 8
    assert sample("factstream_lm_requests_total", outcome="ok") == 2


async def test_5xx_and_429_are_retried_then_succeed() -> None:
    server = Server()
    server.chat = [
        httpx2.Response(503, json={"error": "busy"}),
        httpx2.Response(429, json={"error": "slow down"}, headers={"retry-after": "0"}),
        reply("ok"),
    ]
    lm, registry = make_lm(server, force=LlamaCppBackend())
    assert (await lm.complete(request())).text == "ok"
    await lm.aclose()
    assert len(server.bodies()) == 3
    labels = {"task": "t", "model": "m"}
    assert (
        registry.get_sample_value(
            "factstream_lm_retries_total", {**labels, "reason": "server_error"}
        )
        == 1
    )
    assert (
        registry.get_sample_value(
            "factstream_lm_retries_total", {**labels, "reason": "rate_limited"}
        )
        == 1
    )


async def test_persistent_5xx_raises_after_the_retry_budget() -> None:
    server = Server()
    server.chat = [httpx2.Response(500, json={"error": "boom"})]
    lm, registry = make_lm(server, force=LlamaCppBackend(), retries=2)
    with pytest.raises(LMServerError) as info:
        await lm.complete(request())
    await lm.aclose()
    assert info.value.status == 500
    assert len(server.bodies()) == 3  # first try + 2 retries
    assert (
        registry.get_sample_value(
            "factstream_lm_requests_total", {"task": "t", "model": "m", "outcome": "error"}
        )
        == 1
    )


async def test_4xx_is_not_retried() -> None:
    server = Server()
    server.chat = [httpx2.Response(400, json={"error": "context too long"})]
    lm, _ = make_lm(server, force=LlamaCppBackend())
    with pytest.raises(LMRequestRejected, match="context too long"):
        await lm.complete(request())
    await lm.aclose()
    assert len(server.bodies()) == 1


async def test_the_key_goes_as_a_bearer_header() -> None:
    server = Server()
    server.chat = [reply("x")]
    lm, _ = make_lm(server, force=LlamaCppBackend(), api_key="k-123")
    await lm.complete(request())
    await lm.aclose()
    sent = server.requests[-1]
    assert sent.headers["authorization"] == "Bearer k-123"
    assert sent.headers["content-type"] == "application/json"


@pytest.mark.parametrize(
    "answer",
    [
        httpx2.Response(200, content=b"<html>proxy error</html>"),
        httpx2.Response(200, json=["not", "an", "object"]),
        httpx2.Response(200, json={"choices": []}),
        httpx2.Response(200, json={"choices": [{"message": {"content": "x"}}], "usage": {}}),
    ],
)
async def test_an_unusable_answer_is_a_server_error_not_retried(answer: httpx2.Response) -> None:
    server = Server()
    server.chat = [answer]
    lm, _ = make_lm(server, force=LlamaCppBackend())
    with pytest.raises(LMServerError):
        await lm.complete(request())
    await lm.aclose()
    assert len(server.bodies()) == 1


async def test_outage_makes_callers_wait_and_resume() -> None:
    server = Server()
    down = True
    server.chat = [
        lambda _r: (_ for _ in ()).throw(httpx2.ConnectError("refused")) if down else reply("back")
    ]

    def health(_r: httpx2.Request) -> httpx2.Response:
        if down:
            raise httpx2.ConnectError("refused")
        return models("me")

    server.routes["GET /v1/models"] = health
    lm, registry = make_lm(server, force=LlamaCppBackend(), breaker_threshold=2, retries=1)
    calls = [asyncio.create_task(lm.complete(request())) for _ in range(3)]
    # Far more time than the retry budget: the callers wait instead of failing.
    for _ in range(200):
        await asyncio.sleep(0.005)
        if registry.get_sample_value("factstream_lm_waiting_calls", {"model": "m"}) == 3:
            break
    assert not any(c.done() for c in calls)
    assert registry.get_sample_value("factstream_lm_outage", {"model": "m"}) == 1
    assert registry.get_sample_value("factstream_lm_waiting_calls", {"model": "m"}) == 3
    down = False
    results = await asyncio.wait_for(asyncio.gather(*calls), 5)
    await lm.aclose()
    assert [r.text for r in results] == ["back"] * 3
    assert registry.get_sample_value("factstream_lm_outage", {"model": "m"}) == 0
    assert registry.get_sample_value("factstream_lm_outages_total", {"model": "m"}) == 1
    assert registry.get_sample_value("factstream_lm_waiting_calls", {"model": "m"}) == 0


async def test_outage_longer_than_the_limit_raises() -> None:
    server = Server()
    server.chat = [httpx2.ConnectError("refused")]
    server.routes["GET /v1/models"] = lambda _r: httpx2.Response(503)
    lm, _ = make_lm(server, force=LlamaCppBackend(), breaker_threshold=1, max_outage_s=0.05)
    with pytest.raises(LMUnavailable, match="outage longer"):
        await lm.complete(request())
    await lm.aclose()


async def test_slow_server_that_answers_probes_is_not_an_endless_outage() -> None:
    # Timeouts open the breaker, but the first probe finds the server up: the retry budget
    # still applies, so a request that always times out ends with LMUnavailable.
    server = Server()
    server.chat = [httpx2.ReadTimeout("slow")]
    server.routes["GET /v1/models"] = lambda _r: models("me")
    lm, _ = make_lm(server, force=LlamaCppBackend(), breaker_threshold=1, retries=2)
    with pytest.raises(LMUnavailable, match="timed out"):
        await asyncio.wait_for(lm.complete(request()), 5)
    await lm.aclose()


async def test_concurrency_is_limited() -> None:
    in_flight = peak = 0
    gate = asyncio.Event()

    class SlowTransport(httpx2.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            await gate.wait()
            in_flight -= 1
            return reply("x")

    settings = LMSettings(url=URL, model="m", max_concurrency=2)
    lm = OpenAICompatLM(
        settings,
        LMMetrics.create(CollectorRegistry()),
        http_client=httpx2.AsyncClient(transport=SlowTransport()),
        backend=LlamaCppBackend(),
    )
    calls = [asyncio.create_task(lm.complete(request())) for _ in range(5)]
    await asyncio.sleep(0.05)
    assert peak == 2
    gate.set()
    await asyncio.gather(*calls)
    await lm.aclose()
    assert peak == 2


# -- streaming -----------------------------------------------------------------------------


def chunk(content: str | None, finish: str | None = None) -> dict[str, Any]:
    delta = {"content": content} if content is not None else {}
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


USAGE = {
    "id": "c1",
    "object": "chat.completion.chunk",
    "created": 0,
    "model": "m",
    "choices": [],
    "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12},
}


class Body(httpx2.AsyncByteStream):
    """SSE lines, then (if ``broken``) a read error instead of the rest."""

    def __init__(self, events: list[dict[str, Any]], *, broken: bool = False) -> None:
        self.events, self.broken = events, broken

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for event in self.events:
            yield f"data: {json.dumps(event)}\n\n".encode()
        if self.broken:
            raise httpx2.ReadError("connection reset")
        yield b"data: [DONE]\n\n"


def streamed(events: list[dict[str, Any]], *, broken: bool = False) -> httpx2.Response:
    headers = {"content-type": "text/event-stream"}
    return httpx2.Response(200, headers=headers, stream=Body(events, broken=broken))


PIECES = ['{"a"', ": ", "1}"]


async def test_pieces_arrive_in_order_and_make_the_completion() -> None:
    server = Server()
    server.chat = [
        streamed([chunk(p) for p in PIECES] + [chunk(None, "stop"), USAGE]),
    ]
    lm, registry = make_lm(server, force=LlamaCppBackend())
    seen: list[str] = []

    async def sink(text: str) -> None:
        seen.append(text)

    completion = await lm.stream(request(JsonSchema("x", SCHEMA)), sink)
    await lm.aclose()
    assert seen == PIECES
    assert completion.text == '{"a": 1}' and completion.finish_reason == "stop"
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (9, 3)
    body = server.bodies()[0]
    assert body == {
        **BASE_BODY,
        "grammar": json_schema_grammar(SCHEMA),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    tokens = registry.get_sample_value(
        "factstream_lm_tokens_total", {"task": "t", "model": "m", "kind": "completion"}
    )
    assert tokens == 3


async def test_a_failure_before_the_first_piece_is_retried() -> None:
    server = Server()
    server.chat = [
        httpx2.Response(503, json={"error": "busy"}),
        streamed([chunk(p) for p in PIECES] + [chunk(None, "stop")]),
    ]
    lm, _ = make_lm(server, force=LlamaCppBackend())
    seen: list[str] = []

    async def sink(text: str) -> None:
        seen.append(text)

    completion = await lm.stream(request(), sink)
    await lm.aclose()
    assert completion.text == '{"a": 1}' and seen == PIECES
    assert len(server.bodies()) == 2


async def test_a_stream_broken_after_its_first_piece_is_not_retried() -> None:
    server = Server()
    server.chat = [
        streamed([chunk(PIECES[0])], broken=True),
        streamed([chunk(p) for p in PIECES] + [chunk(None, "stop")]),
    ]
    lm, _ = make_lm(server, force=LlamaCppBackend())
    seen: list[str] = []

    async def sink(text: str) -> None:
        seen.append(text)

    with pytest.raises(LMServerError, match="after its first token"):
        await lm.stream(request(), sink)
    await lm.aclose()
    assert seen == [PIECES[0]]  # nothing shown twice
    assert len(server.bodies()) == 1
