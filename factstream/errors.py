"""factstream's exception hierarchy; every error we raise derives from FactstreamError.

FactstreamError
├── SettingsError                a setting given to Settings.from_env is unknown or invalid
├── ServiceError                 the local stack (factstream services)
│   ├── ToolMissing              a required program (java, mvn, go, ...) is not installed
│   ├── BuildStepFailed          a provisioning step exited non-zero (step, log, its tail)
│   ├── PortTaken                a port the service needs is held by another program
│   ├── ClusterSettingsInvalid * the settings do not describe a cluster (a broker per server)
│   └── ServiceStartFailed       the process died or never became ready (log, its tail)
├── LMError                      the LM server, or what it answered
│   ├── LMConfigError            the backend cannot be determined or is misconfigured
│   │   └── SchemaUnsupported *  a prompt schema the llama.cpp grammar cannot enforce
│   ├── LMUnavailable            unreachable or timing out, past retries or the outage limit
│   ├── LMServerError            kept answering 5xx or 429 after every retry
│   ├── LMRequestRejected        refused the request (4xx): bad schema, context too long ...
│   ├── LMOutputInvalid          output did not parse or broke its constraints, every attempt
│   ├── ConstraintBroken *       one answer broke a rule of its prompt (retried, then the above)
│   └── _Retryable *             one failed attempt worth retrying; never leaves the LM client
├── UnknownPrompt *              no registered prompt has that id, or it is another task's
├── OutageTooLong *              a circuit breaker's outage outlasted the caller's limit
├── EmbedError                   the embedding model cannot be loaded or run
├── BadInput                     an input record that cannot be processed (dead-lettered)
│   ├── IntervalInvalid          a valid time that cannot be: ends before it starts, no zone
│   │   └── IntervalImplausible  a fact's valid time far beyond its document's event time
│   └── LocomoInvalid *          a LoCoMo file not in its README's format (the lab's eval)
├── FeedError                    following RSS and Atom feeds
│   ├── FeedListError *          the feed list cannot be read or does not validate
│   ├── FeedFetchError *         a feed could not be fetched (its kind: 429, 5xx, too large ...)
│   └── FeedParseError *         the body is not an RSS or Atom feed
├── DeadLetterNotFound *         no dead letter at that PARTITION:OFFSET of the dead-letter topic
├── WorkerGone *                 the worker exited while documents still waited to be edited in
├── PlacementError *             the placement map cannot be read or does not fit the topic
├── AccessError                  API keys and the namespaces they may use
│   ├── Unauthenticated          no API key, or one that is not configured
│   └── Forbidden                the key may not read (or publish to) this namespace
├── QueryError                   a question or lookup that cannot be served as asked
│   ├── QuestionInvalid          out of bounds: length, top_k, choices
│   ├── NamespaceNotFound        the namespace has no facts (no partition in the store)
│   └── FactNotFound             no fact with this id in the namespace
└── StoreError                   the fact store (Weaviate) failed or refused a request
    ├── StoreUnavailable         unreachable or timing out
    └── StoreWriteFailed         objects of a batched write were rejected (names the fact ids)

* defined beside the code that raises it, not in this module; tests/unit/test_errors.py finds
  every exception class in the package and fails for one missing from this tree.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

__all__ = [
    "AccessError",
    "BadInput",
    "BuildStepFailed",
    "EmbedError",
    "FactNotFound",
    "FactstreamError",
    "FeedError",
    "Forbidden",
    "IntervalImplausible",
    "IntervalInvalid",
    "LMConfigError",
    "LMError",
    "LMOutputInvalid",
    "LMRequestRejected",
    "LMServerError",
    "LMUnavailable",
    "NamespaceNotFound",
    "PortTaken",
    "QueryError",
    "QuestionInvalid",
    "ServiceError",
    "ServiceStartFailed",
    "SettingsError",
    "StoreError",
    "StoreUnavailable",
    "StoreWriteFailed",
    "ToolMissing",
    "Unauthenticated",
]


class FactstreamError(Exception):
    """Root of every factstream error."""


class SettingsError(FactstreamError):
    """A setting given to Settings.from_env is not a factstream setting, or does not validate."""


class ServiceError(FactstreamError):
    """A local service could not be provisioned or started."""


def _tail_block(tail: str) -> str:
    """The last lines of a log, indented under the message that names the log."""
    if not tail.strip():
        return ""
    lines = tail.splitlines()
    return f"\nits last {len(lines)} lines:\n" + "\n".join(f"  | {line}" for line in lines)


class ToolMissing(ServiceError):
    """A program the provisioning needs is not on PATH."""

    def __init__(self, service: str, tool: str, hint: str) -> None:
        super().__init__(f"{service}: '{tool}' is not installed or not on PATH; {hint}")
        self.service, self.tool = service, tool


class BuildStepFailed(ServiceError):
    """A provisioning step (download, build, install) exited non-zero."""

    def __init__(self, service: str, step: str, returncode: int, log: Path, tail: str = "") -> None:
        super().__init__(
            f"{service}: step '{step}' failed with exit code {returncode}; its log: {log}"
            + _tail_block(tail)
        )
        self.service, self.step, self.returncode, self.log = service, step, returncode, log
        self.tail = tail


class PortTaken(ServiceError):
    """A port the service must listen on is held by a program that is not that service."""

    def __init__(self, service: str, port: int, setting: str) -> None:
        super().__init__(
            f"{service}: port 127.0.0.1:{port} is taken by another program that is not a "
            f"{service} we can use; stop it or choose another port with {setting}"
        )
        self.service, self.port, self.setting = service, port, setting


class ServiceStartFailed(ServiceError):
    """The service process exited, or did not become ready in time."""

    def __init__(self, service: str, reason: str, log: Path, tail: str = "") -> None:
        super().__init__(f"{service}: {reason}; its log: {log}" + _tail_block(tail))
        self.service, self.reason, self.log, self.tail = service, reason, log, tail


class LMError(FactstreamError):
    """The LM server failed us, or its output could not be used."""


class LMConfigError(LMError):
    """The LM backend cannot be determined, or the settings contradict the server."""


class LMUnavailable(LMError):
    """The LM server could not be reached (or timed out) past every retry or the outage limit."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"LM server at {url} unavailable: {reason}")
        self.url, self.reason = url, reason


class LMServerError(LMError):
    """The LM server kept answering 5xx or 429 after every retry."""

    def __init__(self, url: str, status: int, detail: str) -> None:
        super().__init__(f"LM server at {url} answered HTTP {status}: {detail}")
        self.url, self.status, self.detail = url, status, detail


class LMRequestRejected(LMError):
    """The LM server refused the request (4xx); retrying the same request cannot help."""

    def __init__(self, url: str, status: int, detail: str) -> None:
        super().__init__(f"LM server at {url} rejected the request (HTTP {status}): {detail}")
        self.url, self.status, self.detail = url, status, detail


class LMOutputInvalid(LMError):
    """Every attempt's output failed to parse or broke its constraints; nothing was guessed."""

    def __init__(self, prompt: str, attempts: int, reason: str, output: str) -> None:
        super().__init__(
            f"{prompt}: no valid output after {attempts} attempt(s); last problem: {reason}"
        )
        self.prompt, self.attempts, self.reason, self.output = prompt, attempts, reason, output


class EmbedError(FactstreamError):
    """The embedding model could not be loaded or run."""


class BadInput(FactstreamError):
    """An input record that cannot be processed; it goes to the dead-letter topic."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class FeedError(FactstreamError):
    """Following RSS and Atom feeds failed: the feed list, a fetch, or a body."""


class IntervalInvalid(BadInput):
    """A valid time that cannot be used: the interval ends before it starts, or has no zone."""


class IntervalImplausible(IntervalInvalid):
    """A fact's valid time lies further beyond its document's event time than is believable."""

    def __init__(self, when: datetime, event_time: datetime, limit: timedelta) -> None:
        super().__init__(
            f"valid time {when.isoformat()} is more than {limit.days} days after the "
            f"document's event time {event_time.isoformat()}"
        )
        self.when, self.event_time, self.limit = when, event_time, limit


class AccessError(FactstreamError):
    """A request's API key does not allow what it asks."""


class Unauthenticated(AccessError):
    """No API key was given, or it is not one of the configured keys."""

    def __init__(self, reason: str = "a valid API key is required") -> None:
        super().__init__(reason)
        self.reason = reason


class Forbidden(AccessError):
    """The key is valid but may not use this namespace for this action."""

    def __init__(self, namespace: str, action: str) -> None:
        super().__init__(f"this API key may not {action} namespace {namespace!r}")
        self.namespace, self.action = namespace, action


class QueryError(FactstreamError):
    """A question or lookup that cannot be served as asked."""


class QuestionInvalid(QueryError):
    """A question out of bounds (length, top_k, choices)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class NamespaceNotFound(QueryError):
    """The namespace has no facts: nothing was ever applied to it."""

    def __init__(self, namespace: str) -> None:
        super().__init__(f"namespace {namespace!r} not found: it has no facts")
        self.namespace = namespace


class FactNotFound(QueryError):
    """No fact with this id in the namespace."""

    def __init__(self, namespace: str, fact_id: str) -> None:
        super().__init__(f"no fact {fact_id!r} in namespace {namespace!r}")
        self.namespace, self.fact_id = namespace, fact_id


class StoreError(FactstreamError):
    """The fact store failed or refused a request."""


class StoreUnavailable(StoreError):
    """The fact store could not be reached, or timed out; retrying later may help."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"fact store at {url} unavailable: {reason}")
        self.url, self.reason = url, reason


class StoreWriteFailed(StoreError):
    """Some objects of a batched write were rejected; ``failures`` maps fact id to message."""

    def __init__(self, namespace: str, failures: dict[str, str]) -> None:
        shown = "; ".join(f"{fact_id}: {message}" for fact_id, message in failures.items())
        super().__init__(f"namespace {namespace}: {len(failures)} fact(s) not written: {shown}")
        self.namespace, self.failures = namespace, failures
