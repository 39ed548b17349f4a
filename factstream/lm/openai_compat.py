"""The LM client over the OpenAI-compatible chat API (the only module that imports ``openai``).

It adds what the servers do not: a concurrency limit, retries with exponential back-off on
connection errors, timeouts, 5xx and 429, a circuit breaker that makes callers wait out an
outage (logged, and exported as metrics) instead of failing documents, per-task token
accounting, and an explicit structured-output backend per server type.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypedDict, TypeVar, cast

import httpx2
import openai
import orjson
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionMessageParam

from factstream.config import LMSettings
from factstream.errors import (
    LMConfigError,
    LMError,
    LMRequestRejected,
    LMServerError,
    LMUnavailable,
)
from factstream.lm.backends import (
    Backend,
    LlamaCppBackend,
    VLLMBackend,
    VLLMStructuredAPI,
    backend_from_models,
    vllm_api_for_version,
)
from factstream.lm.base import Completion, CompletionRequest, TokenSink, Usage
from factstream.metrics import LMMetrics
from factstream.resilience import CircuitBreaker, OutageTooLong, backoff_delay

__all__ = ["OpenAICompatLM"]

log = logging.getLogger(__name__)
T = TypeVar("T")

_PROBE_TIMEOUT_S = 5.0


class _Retryable(LMError):
    """A failure worth retrying; ``outage`` when the server could not be reached at all.

    Never leaves the client: ``_with_retries`` catches it (before any other LMError) and
    retries, or gives up with LMServerError or LMUnavailable.
    """

    def __init__(self, reason: str, detail: str, *, outage: bool, status: int = 0) -> None:
        super().__init__(detail)
        self.reason, self.detail, self.outage, self.status = reason, detail, outage, status
        self.retry_after: float | None = None


class OpenAICompatLM:
    """LMClient for vLLM's and llama.cpp's OpenAI-compatible servers.

    Args:
        settings: The LM section of the settings.
        metrics: Where to count requests, tokens, retries and outages.
        http_client: An httpx2 client (the HTTP library of openai); tests pass a MockTransport.
        backend: Force a backend instead of resolving it from the settings and the server.
    """

    def __init__(
        self,
        settings: LMSettings,
        metrics: LMMetrics,
        *,
        http_client: httpx2.AsyncClient | None = None,
        backend: Backend | None = None,
    ) -> None:
        self.settings = settings
        self.metrics = metrics
        timeout = httpx2.Timeout(settings.timeout_s, connect=settings.connect_timeout_s)
        self._http = http_client or httpx2.AsyncClient(timeout=timeout)
        self._client = AsyncOpenAI(
            base_url=settings.url,
            api_key=settings.api_key.get_secret_value(),
            max_retries=0,  # retries are ours: back-off, breaker, metrics
            timeout=timeout,
            http_client=self._http,
        )
        self._backend = backend
        self._backend_lock = asyncio.Lock()
        self._semaphore = asyncio.Semaphore(settings.max_concurrency)
        self._breaker = CircuitBreaker(
            threshold=settings.breaker_threshold,
            probe=self._probe,
            probe_interval_s=settings.probe_interval_s,
            probe_max_s=settings.backoff_max_s,
            on_change=self._outage_changed,
        )
        self.metrics.outage.labels(self.model).set(0)

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def backend(self) -> Backend | None:
        """The resolved backend (None until the first request when auto-detecting)."""
        return self._backend

    async def complete(self, request: CompletionRequest) -> Completion:
        backend = await self._resolve_backend()
        body = backend.constraint_fields(request.constraint)
        completion = await self._with_retries(request.task, lambda: self._create(request, body))
        return self._counted(request, completion)

    async def stream(self, request: CompletionRequest, on_token: TokenSink) -> Completion:
        """``complete`` with ``stream: true``: each content delta goes to ``on_token``.

        Retried like ``complete`` until the first delta arrives; a failure after it raises
        LMServerError (the caller has already seen part of the answer).
        """
        backend = await self._resolve_backend()
        body = backend.constraint_fields(request.constraint)
        seen = [False]

        async def sink(text: str) -> None:
            seen[0] = True
            await on_token(text)

        async def send() -> Completion:
            try:
                return await self._create_streamed(request, body, sink)
            except _Retryable as exc:
                if not seen[0]:
                    raise
                detail = f"{exc.detail} (the stream broke after its first token)"
                raise LMServerError(self.settings.url, exc.status, detail) from exc

        completion = await self._with_retries(request.task, send)
        return self._counted(request, completion)

    def _counted(self, request: CompletionRequest, completion: Completion) -> Completion:
        self.metrics.requests.labels(request.task, self.model, "ok").inc()
        usage = completion.usage
        self.metrics.tokens.labels(request.task, self.model, "prompt").inc(usage.prompt_tokens)
        self.metrics.tokens.labels(request.task, self.model, "completion").inc(
            usage.completion_tokens
        )
        return completion

    async def aclose(self) -> None:
        await self._breaker.aclose()
        await self._client.close()
        await self._http.aclose()

    # -- sending ---------------------------------------------------------------------------

    async def _create(self, request: CompletionRequest, fields: dict[str, Any]) -> Completion:
        """One completion, posted with the HTTP client directly: the SDK's request transform
        and response models cost more CPU than the rest of a call to a fast server (issue 37).
        Errors become what the SDK's would have (``_posted``)."""
        started = time.monotonic()
        body: dict[str, Any] = {**_params(self.model, request), **fields}
        async with self._semaphore:
            reply = await self._posted(body)
        self.metrics.latency.labels(request.task, self.model).observe(time.monotonic() - started)
        return _completion(self.settings.url, self.model, reply)

    async def _posted(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST ``body`` to the chat endpoint through the SDK's own request path (its
        headers, auth and error types), the body serialized by orjson and the answer read
        raw: the typed ``chat.completions.create`` transforms its parameters and builds
        response models, which cost more CPU than the rest of a call to a fast server
        (issue 37). The answer's JSON object."""
        with _translated(self.settings.url):
            resp = await self._client.post(
                "/chat/completions",
                cast_to=httpx2.Response,
                content=orjson.dumps(body),
                options={"headers": {"Content-Type": "application/json"}},
            )
        try:
            reply = orjson.loads(resp.content)
        except orjson.JSONDecodeError as exc:
            raise LMServerError(
                self.settings.url, resp.status_code, f"unusable answer: {exc}"
            ) from exc
        if not isinstance(reply, dict):
            raise LMServerError(
                self.settings.url, resp.status_code, "unusable answer: not a JSON object"
            )
        return reply

    async def _create_streamed(
        self, request: CompletionRequest, fields: dict[str, Any], on_token: TokenSink
    ) -> Completion:
        started = time.monotonic()
        parts: list[str] = []
        usage, model, finish = Usage(), self.model, None
        async with self._semaphore:
            with _translated(self.settings.url):
                chunks = await self._client.chat.completions.create(
                    **_params(self.model, request),
                    stream=True,
                    stream_options={"include_usage": True},
                    extra_body=fields or None,
                )
                async with chunks:  # closed early if on_token raises (a client went away)
                    async for chunk in chunks:
                        model = chunk.model or model
                        if chunk.usage is not None:
                            usage = Usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
                        if not chunk.choices:
                            continue
                        choice = chunk.choices[0]
                        finish = choice.finish_reason or finish
                        if choice.delta.content:
                            parts.append(choice.delta.content)
                            await on_token(choice.delta.content)
        self.metrics.latency.labels(request.task, self.model).observe(time.monotonic() - started)
        return Completion(text="".join(parts), usage=usage, model=model, finish_reason=finish)

    async def _with_retries(self, task: str, send: Callable[[], Awaitable[T]]) -> T:
        """Run ``send()`` until it succeeds, retrying what is retryable; wait out outages."""
        attempt = 0
        max_outage = self.settings.max_outage_s or None
        while True:
            await self._wait_for_server(max_outage)
            try:
                result = await send()
            except _Retryable as exc:
                attempt += 1
                self.metrics.retries.labels(task, self.model, exc.reason).inc()
                if exc.outage:
                    self._breaker.record_failure()
                if self._breaker.is_open and await self._wait_for_server(max_outage):
                    attempt = 0  # a real outage ended: the request starts afresh
                    continue
                if attempt > self.settings.retries:
                    self.metrics.requests.labels(task, self.model, "error").inc()
                    raise self._give_up(exc, attempt) from exc
                delay = exc.retry_after or backoff_delay(
                    attempt, self.settings.backoff_s, self.settings.backoff_max_s
                )
                log.info(
                    "LM %s (%s); retry %d/%d in %.1fs",
                    exc.reason,
                    exc.detail,
                    attempt,
                    self.settings.retries,
                    delay,
                )
                await asyncio.sleep(delay)
                continue
            except LMError:
                self.metrics.requests.labels(task, self.model, "error").inc()
                raise
            self._breaker.record_success()
            return result

    async def _wait_for_server(self, max_outage: float | None) -> bool:
        if not self._breaker.is_open:
            return False
        gauge = self.metrics.waiting.labels(self.model)
        gauge.inc()
        try:
            return await self._breaker.wait(max_outage)
        except OutageTooLong as exc:
            raise LMUnavailable(self.settings.url, f"outage longer than {max_outage}s") from exc
        finally:
            gauge.dec()

    def _give_up(self, exc: _Retryable, attempts: int) -> LMError:
        detail = f"{exc.detail} (after {attempts} attempts)"
        if exc.status:
            return LMServerError(self.settings.url, exc.status, detail)
        return LMUnavailable(self.settings.url, detail)

    def _outage_changed(self, is_open: bool) -> None:
        self.metrics.outage.labels(self.model).set(1 if is_open else 0)
        if is_open:
            self.metrics.outages.labels(self.model).inc()
            log.warning(
                "LM server %s unreachable after %d attempts in a row: calls now wait for it "
                "(probing every %.1fs)",
                self.settings.url,
                self.settings.breaker_threshold,
                self.settings.probe_interval_s,
            )
        else:
            log.warning("LM server %s answers again: waiting calls resume", self.settings.url)

    async def _probe(self) -> bool:
        try:
            resp = await self._http.get(self._url("/models"), timeout=_PROBE_TIMEOUT_S)
        except httpx2.HTTPError:
            return False
        return resp.status_code == 200

    # -- backend resolution ----------------------------------------------------------------

    async def _resolve_backend(self) -> Backend:
        if self._backend is not None:
            return self._backend
        async with self._backend_lock:
            if self._backend is None:
                self._backend = await self._detect_backend()
                log.info("LM backend for %s: %s", self.settings.url, self._backend)
        return self._backend

    async def _detect_backend(self) -> Backend:
        kind = self.settings.backend
        if kind == "auto":
            models = await self._with_retries(
                "detect", lambda: self._get_json(self._url("/models"))
            )
            kind = backend_from_models(models)
        if kind == "llamacpp":
            return LlamaCppBackend()
        api: VLLMStructuredAPI
        if self.settings.vllm_structured_api == "auto":
            root = self._url("/models").removesuffix("/v1/models").removesuffix("/models")
            info = await self._with_retries("detect", lambda: self._get_json(f"{root}/version"))
            api = vllm_api_for_version(str(info.get("version", "")))
        else:
            api = self.settings.vllm_structured_api
        return VLLMBackend(api)

    def _url(self, path: str) -> str:
        return self.settings.url.rstrip("/") + path

    async def _get_json(self, url: str) -> dict[str, Any]:
        try:
            resp = await self._http.get(url)
        except httpx2.TimeoutException as exc:
            raise _Retryable("timeout", f"GET {url} timed out", outage=True) from exc
        except httpx2.HTTPError as exc:
            raise _Retryable("connection", f"GET {url}: {exc!r}", outage=True) from exc
        if resp.status_code >= 500 or resp.status_code == 429:
            raise _Retryable("server_error", f"GET {url}", outage=False, status=resp.status_code)
        if resp.status_code != 200:
            raise LMConfigError(f"GET {url} answered HTTP {resp.status_code}: {resp.text[:200]}")
        data = resp.json()
        if not isinstance(data, dict):
            raise LMConfigError(f"GET {url} did not answer a JSON object")
        return data


class _Params(TypedDict):
    model: str
    messages: list[ChatCompletionMessageParam]
    max_tokens: int
    temperature: float


def _params(model: str, request: CompletionRequest) -> _Params:
    """The chat request's fields shared by plain and streamed completions."""
    messages = [m.model_dump() for m in request.messages]
    return _Params(
        model=model,
        messages=cast(list[ChatCompletionMessageParam], messages),
        max_tokens=request.max_tokens,
        temperature=request.temperature,
    )


@contextlib.contextmanager
def _translated(url: str) -> Iterator[None]:
    """openai's (and a streamed body's httpx) exceptions become _Retryable or LMError subclasses."""
    try:
        yield
    except openai.OpenAIError as exc:
        raise _translate(url, exc) from exc
    except httpx2.TimeoutException as exc:  # reading a streamed body: not wrapped by openai
        raise _Retryable("timeout", "the stream timed out", outage=True) from exc
    except httpx2.HTTPError as exc:
        raise _Retryable("connection", f"the stream broke: {exc!r}", outage=True) from exc


def _translate(url: str, exc: openai.OpenAIError) -> LMError:
    if isinstance(exc, openai.APITimeoutError):
        return _Retryable("timeout", "request timed out", outage=True)
    if isinstance(exc, openai.APIConnectionError):
        return _Retryable("connection", f"cannot connect: {exc.__cause__ or exc}", outage=True)
    if isinstance(exc, openai.APIStatusError):
        status, detail = exc.status_code, _detail(exc)
        if status == 429:
            retry = _Retryable("rate_limited", detail, outage=False, status=status)
            retry.retry_after = _retry_after(exc.response)
            return retry
        if status >= 500:
            return _Retryable("server_error", detail, outage=False, status=status)
        return LMRequestRejected(url, status, detail)
    return LMServerError(url, 0, f"unusable answer: {exc}")


def _detail(exc: openai.APIStatusError) -> str:
    try:
        return exc.response.text[:500]
    except Exception:  # a streamed or closed body
        return str(exc)[:500]


def _retry_after(response: httpx2.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _completion(url: str, model: str, reply: dict[str, Any]) -> Completion:
    """The chat completion answer ``reply`` (its JSON object) as a Completion."""
    try:
        choices = reply.get("choices") or []
        if not choices:
            raise LMServerError(url, 200, "the answer has no choices")
        choice = choices[0]
        usage = Usage()
        if (counted := reply.get("usage")) is not None:
            usage = Usage(int(counted["prompt_tokens"]), int(counted["completion_tokens"]))
        return Completion(
            text=(choice.get("message") or {}).get("content") or "",
            usage=usage,
            model=reply.get("model") or model,
            finish_reason=choice.get("finish_reason"),
        )
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise LMServerError(url, 200, f"unusable answer: {exc!r}") from exc
