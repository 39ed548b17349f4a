"""Every Prometheus metric factstream exports, created once against an injected registry.

Labels stay low-cardinality: task names, model names, and small fixed enums. Each metric is
declared once, as a field of its group with its name, labels and help
(``_counter``/``_gauge``/``_histogram``); ``create`` builds a group's fields on a registry.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import Any, Self

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = [
    "timed",
    "EmbedMetrics",
    "FeedMetrics",
    "LMMetrics",
    "Metrics",
    "MetricSpec",
    "MirrorMetrics",
    "QueryMetrics",
    "WorkerMetrics",
]

_LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
_DISTANCE_BUCKETS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 128, 256)
_STAGE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
_ASK_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
_SPEC = "metric"


@dataclass(frozen=True)
class MetricSpec:
    """One metric's declaration: its type, name, label names (space-separated) and help."""

    kind: type[Counter] | type[Gauge] | type[Histogram]
    name: str
    labels: str
    help: str
    buckets: tuple[float, ...] | None = None

    def build(self, registry: CollectorRegistry) -> Counter | Gauge | Histogram:
        """Create and register the metric on ``registry``."""
        labels = self.labels.split()
        if self.buckets is not None:  # only histograms have buckets
            return Histogram(self.name, self.help, labels, buckets=self.buckets, registry=registry)
        return self.kind(self.name, self.help, labels, registry=registry)


def _declare(spec: MetricSpec) -> Any:
    # A dataclass field without a default (required by __init__) that carries its spec.
    return field(metadata={_SPEC: spec})


def _counter(name: str, labels: str, help: str) -> Any:
    return _declare(MetricSpec(Counter, name, labels, help))


def _gauge(name: str, labels: str, help: str) -> Any:
    return _declare(MetricSpec(Gauge, name, labels, help))


def _histogram(name: str, labels: str, help: str, buckets: tuple[float, ...]) -> Any:
    return _declare(MetricSpec(Histogram, name, labels, help, buckets))


@dataclass(frozen=True)
class _Group:
    """A group of metrics, each a field declared with ``_counter``/``_gauge``/``_histogram``."""

    @classmethod
    def create(cls, registry: CollectorRegistry) -> Self:
        """Register the group's metrics on ``registry``, in declaration order."""
        built = {f.name: f.metadata[_SPEC].build(registry) for f in fields(cls)}
        return cls(**built)


@dataclass(frozen=True)
class LMMetrics(_Group):
    """LM requests, tokens, retries, cache, outages."""

    requests: Counter = _counter(
        "factstream_lm_requests",
        "task model outcome",
        "LM calls by task and outcome (ok, cached, error, invalid_output).",
    )
    tokens: Counter = _counter(
        "factstream_lm_tokens",
        "task model kind",
        "Tokens the LM server reported, by task and kind (prompt, completion).",
    )
    latency: Histogram = _histogram(
        "factstream_lm_request_seconds",
        "task model",
        "Seconds per LM server request (successful ones).",
        _LATENCY_BUCKETS,
    )
    retries: Counter = _counter(
        "factstream_lm_retries",
        "task model reason",
        "LM retries by reason (connection, timeout, server_error, rate_limited, invalid_output).",
    )
    invalid_outputs: Counter = _counter(
        "factstream_lm_invalid_outputs",
        "task model kind",
        "LM answers the task could not use as they came, by task and kind: json (not JSON), "
        "schema (JSON of the wrong shape), check (broke the prompt's rules), cut_off (stopped "
        "at the token limit). Each is asked again, up to FACTSTREAM_LM_OUTPUT_ATTEMPTS.",
    )
    repaired: Counter = _counter(
        "factstream_lm_repaired",
        "task model kind",
        "LM answers repaired instead of asked again, by task and kind: control_characters "
        "(raw control characters inside JSON strings, escaped).",
    )
    refused: Counter = _counter(
        "factstream_lm_refused",
        "task model reason",
        "Parts of LM answers refused, by task and reason: structure, time, interval "
        "(still refused by the prompt's checks after every retry; the fact was kept "
        "without them); no_words, prompt_text, placeholder, ungrounded_entity, "
        "ungrounded_number (the fact is not grounded in its document: dropped); not_about "
        "(classification made false a fact the document does not name: refused, the fact "
        "keeps its truth); restated (... a fact the document states word for word: "
        "refused likewise).",
    )
    grounded: Counter = _counter(
        "factstream_lm_grounded",
        "task model outcome",
        "Added and rewritten facts the grounding check saw, by task and outcome: kept, "
        "or refused (the reason is in factstream_lm_refused). kept / (kept + refused) "
        "is the share the check keeps.",
    )
    subject_checked: Counter = _counter(
        "factstream_lm_subject_checked",
        "task model outcome",
        "Facts the LM's classification made false (to invalidate, close or rewrite) that "
        "the subject check saw, by task and outcome: kept (the document names one of the "
        "fact's entities), refused (it names none, or states the fact: not_about or "
        "restated in factstream_lm_refused; the fact keeps its truth), unchecked (the fact "
        "names nothing to look for).",
    )
    cache_hits: Counter = _counter(
        "factstream_lm_cache_hits", "task model", "LM answers served from the response cache."
    )
    cached_tokens: Counter = _counter(
        "factstream_lm_cached_tokens",
        "task model kind",
        "Tokens of answers served from the response cache, as first spent, by task "
        "and kind (prompt, completion): what a rerun would have cost without the cache.",
    )
    outage: Gauge = _gauge(
        "factstream_lm_outage",
        "model",
        "1 while the LM server is considered down (callers wait), else 0.",
    )
    outages: Counter = _counter(
        "factstream_lm_outages", "model", "LM outages declared (the circuit breaker opened)."
    )
    waiting: Gauge = _gauge(
        "factstream_lm_waiting_calls", "model", "LM calls waiting for the server to come back."
    )


@dataclass(frozen=True)
class EmbedMetrics(_Group):
    """Embedding batches and texts."""

    texts: Counter = _counter("factstream_embed_texts", "model", "Texts embedded.")
    latency: Histogram = _histogram(
        "factstream_embed_batch_seconds",
        "model",
        "Seconds the model computed per embedding call (merged requests; no queueing).",
        _LATENCY_BUCKETS,
    )


@dataclass(frozen=True)
class FeedMetrics(_Group):
    """Feed polls, published entries, errors by kind, and how far behind each feed is."""

    polls: Counter = _counter(
        "factstream_feed_polls", "feed outcome", "Feed polls by outcome (ok, not_modified, error)."
    )
    entries: Counter = _counter(
        "factstream_feed_entries_published",
        "feed change",
        "Feed entries published as Documents, by change (new, updated).",
    )
    errors: Counter = _counter(
        "factstream_feed_errors",
        "feed kind",
        "Feed errors by kind (unreachable, rate_limited, server_error, http_error, "
        "too_large, not_a_feed, bad_entry, publish).",
    )
    lag: Gauge = _gauge(
        "factstream_feed_lag_seconds",
        "feed",
        "Seconds from the newest entry seen in the feed until now (read live on scrape).",
    )


@dataclass(frozen=True)
class WorkerMetrics(_Group):
    """The editor's work: documents by outcome, seconds per stage, edits, dead letters, lag,
    the window (documents in flight, re-decisions and what they cost)."""

    documents: Counter = _counter(
        "factstream_documents",
        "outcome",
        "Input documents processed, by outcome (applied, empty, duplicate, recovered, "
        "review, dead_letter).",
    )
    stages: Histogram = _histogram(
        "factstream_stage_seconds",
        "stage",
        "Seconds per editing stage (embed, retrieve, classify, rewrite, extract, publish, apply).",
        _STAGE_BUCKETS,
    )
    edits: Counter = _counter(
        "factstream_edits", "op", "Edits published to the changelog, by op (all namespaces)."
    )
    namespace_edits: Counter = _counter(
        "factstream_namespace_edits",
        "namespace op",
        "Edits published to the changelog, by namespace and op, for the namespaces with "
        "series of their own only: FACTSTREAM_WORKER_METRICS_NAMESPACES and the "
        "FACTSTREAM_WORKER_METRICS_BUSIEST busiest by edits (agents/series.py).",
    )
    dead_letters: Counter = _counter(
        "factstream_dead_letters",
        "error_type",
        "Input records sent to the dead-letter topic, by error type.",
    )
    lag: Gauge = _gauge(
        "factstream_consumer_lag",
        "topic partition",
        "Records of an input partition not yet processed (high watermark - next offset).",
    )
    facts: Gauge = _gauge(
        "factstream_facts",
        "namespace truth",
        "Facts of a namespace by current truth (true, false), for the namespaces with "
        "series of their own only; exported by the worker that owns the namespace's "
        "partition.",
    )
    in_flight: Gauge = _gauge(
        "factstream_documents_in_flight",
        "partition",
        "Documents of an input partition read and not yet committed (the window: "
        "decided or being decided, waiting for their turn, or committing).",
    )
    redecisions: Counter = _counter(
        "factstream_redecisions",
        "reason at",
        "Documents decided again because their candidates changed since their "
        "decision, by how (added, removed, changed, reordered) and when (early: "
        "after an earlier commit, before their turn; commit: at their commit).",
    )
    redecision_tokens: Counter = _counter(
        "factstream_redecision_tokens",
        "task",
        "LM tokens (prompt and completion) spent deciding documents again, by task.",
    )
    window_outcomes: Counter = _counter(
        "factstream_window_outcomes",
        "step changed",
        "Waits for an earlier commit and re-decisions of the window, by whether they "
        "changed the outcome (changed: true/false): a wait (step wait), the candidates "
        "the document is then judged on; a re-decision (step early or commit), its plan.",
    )
    dependency_waits: Counter = _counter(
        "factstream_dependency_waits",
        "on",
        "Documents that waited before their judgement for an earlier document of "
        "their window: on depends (its planned edits may change their candidates: "
        "decided after its commit), unknown (its plan was not known yet), judgement "
        "(predict: its decision, not its commit) or predicted (predict: decided on the "
        "knowledge base the earlier plans will leave).",
    )
    dependency_distance: Histogram = _histogram(
        "factstream_dependency_distance",
        "",
        "Documents between a document and the nearest earlier one in flight whose "
        "planned edits it waited for (1: the one just before it).",
        _DISTANCE_BUCKETS,
    )
    tenants_deactivated: Counter = _counter(
        "factstream_tenants_deactivated",
        "",
        "Namespaces whose Weaviate tenants this worker made inactive after "
        "FACTSTREAM_STORE_TENANT_IDLE_S seconds unused (they come back on their next use).",
    )
    tenants_active: Gauge = _gauge(
        "factstream_tenants_active",
        "",
        "Active Weaviate tenants of the namespaces this worker owns, at its latest idle sweep.",
    )


@dataclass(frozen=True)
class QueryMetrics(_Group):
    """Answering questions, over HTTP (the API) and Kafka (the worker's query agent) alike."""

    ask_seconds: Histogram = _histogram(
        "factstream_ask_seconds",
        "stage",
        "Seconds per stage of answering a question (prepare, embed, retrieve, answer, total).",
        _ASK_BUCKETS,
    )
    questions: Counter = _counter(
        "factstream_questions",
        "outcome",
        "Questions from factstream.questions, by outcome (answered, or the error code "
        "of the answer: unauthenticated, forbidden, invalid, not_found, unavailable, "
        "failed; skipped when no answer can be addressed).",
    )
    time_plans: Counter = _counter(
        "factstream_time_plans",
        "outcome",
        "LM plans of a question's valid time, by outcome (anchored, past: used; "
        "no_scope, no_anchor, unbounded, invalid, lm_error: the rules' time stayed).",
    )
    answers: Counter = _counter(
        "factstream_answers",
        "mode",
        "Questions answered, by how (mode: single or multi_hop, as auto decided).",
    )
    second_rounds: Counter = _counter(
        "factstream_ask_second_rounds",
        "mode",
        "Answers the self-check found unsupported by their facts, so retrieved once "
        "more (with the question and the draft), by mode.",
    )

    def observe_ask(self, timings: dict[str, float]) -> None:
        """Record the seconds of each stage of one answered question."""
        for stage, seconds in timings.items():
            self.ask_seconds.labels(stage).observe(seconds)


@dataclass(frozen=True)
class MirrorMetrics(_Group):
    """``factstream mirror postgres``: what it applied, what it refused, how far behind it is.

    A process of its own with its own registry (not part of ``Metrics``).
    """

    edits: Counter = _counter(
        "factstream_mirror_edits_applied",
        "",
        "Changelog edits written to the mirror's database (each once).",
    )
    batches: Counter = _counter(
        "factstream_mirror_batches",
        "outcome",
        "Document batches by outcome (applied, duplicate: the document had one).",
    )
    dead_letters: Counter = _counter(
        "factstream_mirror_dead_letters",
        "kind",
        "Changelog records put in the dead_letters table, by kind (unknown_version, malformed).",
    )
    lag: Gauge = _gauge(
        "factstream_mirror_lag_records",
        "",
        "Committed changelog records not yet in the database (after each round).",
    )
    rounds: Counter = _counter(
        "factstream_mirror_rounds",
        "",
        "Database transactions written (a round: batches and offsets together).",
    )


@dataclass(frozen=True)
class Metrics:
    """All of factstream's metrics; build one per process (or per test) with ``create``."""

    registry: CollectorRegistry
    lm: LMMetrics
    embed: EmbedMetrics
    feeds: FeedMetrics
    worker: WorkerMetrics
    query: QueryMetrics

    @classmethod
    def create(cls, registry: CollectorRegistry | None = None) -> Metrics:
        """Create every metric on ``registry`` (a fresh one if None)."""
        registry = registry if registry is not None else CollectorRegistry()
        return cls(
            registry=registry,
            lm=LMMetrics.create(registry),
            embed=EmbedMetrics.create(registry),
            feeds=FeedMetrics.create(registry),
            worker=WorkerMetrics.create(registry),
            query=QueryMetrics.create(registry),
        )


@contextmanager
def timed(timings: dict[str, float], stage: str) -> Iterator[None]:
    """Add the seconds the block takes to ``timings[stage]``."""
    started = time.perf_counter()
    try:
        yield
    finally:
        timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - started
