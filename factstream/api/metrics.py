"""The API's Prometheus metrics, registered on the injected registry (clients.metrics)."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Histogram

__all__ = ["ApiMetrics"]

_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)


@dataclass(frozen=True)
class ApiMetrics:
    """HTTP requests by route and status; ask latency per stage."""

    requests: Counter
    ask_seconds: Histogram

    @classmethod
    def create(cls, registry: CollectorRegistry) -> ApiMetrics:
        return cls(
            requests=Counter(
                "factstream_api_requests",
                "HTTP requests by route template, method and status code.",
                ["route", "method", "status"],
                registry=registry,
            ),
            ask_seconds=Histogram(
                "factstream_ask_seconds",
                "Seconds per stage of answering a question (embed, retrieve, answer, total).",
                ["stage"],
                buckets=_BUCKETS,
                registry=registry,
            ),
        )

    def observe_ask(self, timings: dict[str, float]) -> None:
        for stage, seconds in timings.items():
            self.ask_seconds.labels(stage).observe(seconds)
