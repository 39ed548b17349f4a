"""Every Prometheus metric factstream exports, created once against an injected registry.

Labels stay low-cardinality: task names, model names, and small fixed enums.
"""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

__all__ = [
    "EmbedMetrics",
    "FeedMetrics",
    "LMMetrics",
    "Metrics",
    "MirrorMetrics",
    "QueryMetrics",
    "WorkerMetrics",
]

_LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


@dataclass(frozen=True)
class LMMetrics:
    """LM requests, tokens, retries, cache, outages."""

    requests: Counter
    tokens: Counter
    latency: Histogram
    retries: Counter
    refused: Counter
    grounded: Counter
    cache_hits: Counter
    cached_tokens: Counter
    outage: Gauge
    outages: Counter
    waiting: Gauge

    @classmethod
    def create(cls, registry: CollectorRegistry) -> LMMetrics:
        """Register the LM metrics on ``registry``."""
        return cls(
            requests=Counter(
                "factstream_lm_requests",
                "LM calls by task and outcome (ok, cached, error, invalid_output).",
                ["task", "model", "outcome"],
                registry=registry,
            ),
            tokens=Counter(
                "factstream_lm_tokens",
                "Tokens the LM server reported, by task and kind (prompt, completion).",
                ["task", "model", "kind"],
                registry=registry,
            ),
            latency=Histogram(
                "factstream_lm_request_seconds",
                "Seconds per LM server request (successful ones).",
                ["task", "model"],
                buckets=_LATENCY_BUCKETS,
                registry=registry,
            ),
            retries=Counter(
                "factstream_lm_retries",
                "LM retries by reason (connection, timeout, server_error, rate_limited, "
                "invalid_output).",
                ["task", "model", "reason"],
                registry=registry,
            ),
            refused=Counter(
                "factstream_lm_refused",
                "Parts of LM answers refused, by task and reason: structure, time, interval "
                "(still refused by the prompt's checks after every retry; the fact was kept "
                "without them); prompt_text, placeholder, ungrounded_entity, ungrounded_number "
                "(the fact is not grounded in its document: dropped).",
                ["task", "model", "reason"],
                registry=registry,
            ),
            grounded=Counter(
                "factstream_lm_grounded",
                "Added and rewritten facts the grounding check saw, by task and outcome: kept, "
                "or refused (the reason is in factstream_lm_refused). kept / (kept + refused) "
                "is the share the check keeps.",
                ["task", "model", "outcome"],
                registry=registry,
            ),
            cache_hits=Counter(
                "factstream_lm_cache_hits",
                "LM answers served from the response cache.",
                ["task", "model"],
                registry=registry,
            ),
            cached_tokens=Counter(
                "factstream_lm_cached_tokens",
                "Tokens of answers served from the response cache, as first spent, by task "
                "and kind (prompt, completion): what a rerun would have cost without the cache.",
                ["task", "model", "kind"],
                registry=registry,
            ),
            outage=Gauge(
                "factstream_lm_outage",
                "1 while the LM server is considered down (callers wait), else 0.",
                ["model"],
                registry=registry,
            ),
            outages=Counter(
                "factstream_lm_outages",
                "LM outages declared (the circuit breaker opened).",
                ["model"],
                registry=registry,
            ),
            waiting=Gauge(
                "factstream_lm_waiting_calls",
                "LM calls waiting for the server to come back.",
                ["model"],
                registry=registry,
            ),
        )


@dataclass(frozen=True)
class EmbedMetrics:
    """Embedding batches and texts."""

    texts: Counter
    latency: Histogram

    @classmethod
    def create(cls, registry: CollectorRegistry) -> EmbedMetrics:
        """Register the embedding metrics on ``registry``."""
        return cls(
            texts=Counter(
                "factstream_embed_texts",
                "Texts embedded.",
                ["model"],
                registry=registry,
            ),
            latency=Histogram(
                "factstream_embed_batch_seconds",
                "Seconds the model computed per embedding call (merged requests; no queueing).",
                ["model"],
                buckets=_LATENCY_BUCKETS,
                registry=registry,
            ),
        )


@dataclass(frozen=True)
class FeedMetrics:
    """Feed polls, published entries, errors by kind, and how far behind each feed is."""

    polls: Counter
    entries: Counter
    errors: Counter
    lag: Gauge

    @classmethod
    def create(cls, registry: CollectorRegistry) -> FeedMetrics:
        """Register the feed metrics on ``registry``; ``feed`` labels come from the feed list."""
        return cls(
            polls=Counter(
                "factstream_feed_polls",
                "Feed polls by outcome (ok, not_modified, error).",
                ["feed", "outcome"],
                registry=registry,
            ),
            entries=Counter(
                "factstream_feed_entries_published",
                "Feed entries published as Documents, by change (new, updated).",
                ["feed", "change"],
                registry=registry,
            ),
            errors=Counter(
                "factstream_feed_errors",
                "Feed errors by kind (unreachable, rate_limited, server_error, http_error, "
                "too_large, not_a_feed, bad_entry, publish).",
                ["feed", "kind"],
                registry=registry,
            ),
            lag=Gauge(
                "factstream_feed_lag_seconds",
                "Seconds from the newest entry seen in the feed until now (read live on scrape).",
                ["feed"],
                registry=registry,
            ),
        )


_DISTANCE_BUCKETS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 128, 256)
_STAGE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


@dataclass(frozen=True)
class WorkerMetrics:
    """The editor's work: documents by outcome, seconds per stage, edits, dead letters, lag,
    the window (documents in flight, re-decisions and what they cost)."""

    documents: Counter
    stages: Histogram
    edits: Counter
    dead_letters: Counter
    lag: Gauge
    facts: Gauge
    in_flight: Gauge
    redecisions: Counter
    redecision_tokens: Counter
    dependency_waits: Counter
    dependency_distance: Histogram

    @classmethod
    def create(cls, registry: CollectorRegistry) -> WorkerMetrics:
        """Register the worker metrics on ``registry`` (namespace and op are bounded labels)."""
        return cls(
            documents=Counter(
                "factstream_documents",
                "Input documents processed, by outcome (applied, empty, duplicate, recovered, "
                "review, dead_letter).",
                ["outcome"],
                registry=registry,
            ),
            stages=Histogram(
                "factstream_stage_seconds",
                "Seconds per editing stage (embed, retrieve, classify, rewrite, extract, "
                "publish, apply).",
                ["stage"],
                buckets=_STAGE_BUCKETS,
                registry=registry,
            ),
            edits=Counter(
                "factstream_edits",
                "Edits published to the changelog, by namespace and op.",
                ["namespace", "op"],
                registry=registry,
            ),
            dead_letters=Counter(
                "factstream_dead_letters",
                "Input records sent to the dead-letter topic, by error type.",
                ["error_type"],
                registry=registry,
            ),
            lag=Gauge(
                "factstream_consumer_lag",
                "Records of an input partition not yet processed (high watermark - next offset).",
                ["topic", "partition"],
                registry=registry,
            ),
            facts=Gauge(
                "factstream_facts",
                "Facts of a namespace by current truth (true, false); exported by the worker "
                "that owns the namespace's partition.",
                ["namespace", "truth"],
                registry=registry,
            ),
            in_flight=Gauge(
                "factstream_documents_in_flight",
                "Documents of an input partition read and not yet committed (the window: "
                "decided or being decided, waiting for their turn, or committing).",
                ["partition"],
                registry=registry,
            ),
            redecisions=Counter(
                "factstream_redecisions",
                "Documents decided again because their candidates changed since their "
                "decision, by how (added, removed, changed, reordered) and when (early: "
                "after an earlier commit, before their turn; commit: at their commit).",
                ["reason", "at"],
                registry=registry,
            ),
            redecision_tokens=Counter(
                "factstream_redecision_tokens",
                "LM tokens (prompt and completion) spent deciding documents again, by task.",
                ["task"],
                registry=registry,
            ),
            dependency_waits=Counter(
                "factstream_dependency_waits",
                "Documents that waited before their judgement for an earlier document of "
                "their window: on depends (its planned edits may change their candidates: "
                "decided after its commit) or unknown (its plan was not known yet).",
                ["on"],
                registry=registry,
            ),
            dependency_distance=Histogram(
                "factstream_dependency_distance",
                "Documents between a document and the nearest earlier one in flight whose "
                "planned edits it waited for (1: the one just before it).",
                buckets=_DISTANCE_BUCKETS,
                registry=registry,
            ),
        )


_ASK_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


@dataclass(frozen=True)
class QueryMetrics:
    """Answering questions, over HTTP (the API) and Kafka (the worker's query agent) alike."""

    ask_seconds: Histogram
    questions: Counter
    time_plans: Counter
    answers: Counter
    second_rounds: Counter

    @classmethod
    def create(cls, registry: CollectorRegistry) -> QueryMetrics:
        """Register the query metrics on ``registry``."""
        return cls(
            ask_seconds=Histogram(
                "factstream_ask_seconds",
                "Seconds per stage of answering a question (embed, retrieve, answer, total).",
                ["stage"],
                buckets=_ASK_BUCKETS,
                registry=registry,
            ),
            questions=Counter(
                "factstream_questions",
                "Questions from factstream.questions, by outcome (answered, or the error code "
                "of the answer: unauthenticated, forbidden, invalid, not_found, unavailable, "
                "failed; skipped when no answer can be addressed).",
                ["outcome"],
                registry=registry,
            ),
            time_plans=Counter(
                "factstream_time_plans",
                "LM plans of a question's valid time, by outcome (anchored, past: used; "
                "no_scope, no_anchor, unbounded, invalid, lm_error: the rules' time stayed).",
                ["outcome"],
                registry=registry,
            ),
            answers=Counter(
                "factstream_answers",
                "Questions answered, by how (mode: single or multi_hop, as auto decided).",
                ["mode"],
                registry=registry,
            ),
            second_rounds=Counter(
                "factstream_ask_second_rounds",
                "Answers the self-check found unsupported by their facts, so retrieved once "
                "more (with the question and the draft), by mode.",
                ["mode"],
                registry=registry,
            ),
        )

    def observe_ask(self, timings: dict[str, float]) -> None:
        """Record the seconds of each stage of one answered question."""
        for stage, seconds in timings.items():
            self.ask_seconds.labels(stage).observe(seconds)


@dataclass(frozen=True)
class MirrorMetrics:
    """``factstream mirror postgres``: what it applied, what it refused, how far behind it is.

    A process of its own with its own registry (not part of ``Metrics``).
    """

    edits: Counter
    batches: Counter
    dead_letters: Counter
    lag: Gauge
    rounds: Counter

    @classmethod
    def create(cls, registry: CollectorRegistry) -> MirrorMetrics:
        """Register the mirror's metrics on ``registry``."""
        return cls(
            edits=Counter(
                "factstream_mirror_edits_applied",
                "Changelog edits written to the mirror's database (each once).",
                registry=registry,
            ),
            batches=Counter(
                "factstream_mirror_batches",
                "Document batches by outcome (applied, duplicate: the document had one).",
                ["outcome"],
                registry=registry,
            ),
            dead_letters=Counter(
                "factstream_mirror_dead_letters",
                "Changelog records put in the dead_letters table, by kind (unknown_version, "
                "malformed).",
                ["kind"],
                registry=registry,
            ),
            lag=Gauge(
                "factstream_mirror_lag_records",
                "Committed changelog records not yet in the database (after each round).",
                registry=registry,
            ),
            rounds=Counter(
                "factstream_mirror_rounds",
                "Database transactions written (a round: batches and offsets together).",
                registry=registry,
            ),
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
