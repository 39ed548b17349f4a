"""The API's Prometheus metrics, registered on the injected registry (clients.metrics)."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client import Counter

from factstream.metrics import Metrics, QueryMetrics

__all__ = ["ApiMetrics"]


@dataclass(frozen=True)
class ApiMetrics:
    """HTTP requests by route and status; ask latency per stage (shared with the Kafka path)."""

    requests: Counter
    query: QueryMetrics

    @classmethod
    def create(cls, metrics: Metrics) -> ApiMetrics:
        return cls(
            requests=Counter(
                "factstream_api_requests",
                "HTTP requests by route template, method and status code.",
                ["route", "method", "status"],
                registry=metrics.registry,
            ),
            query=metrics.query,
        )

    def observe_ask(self, timings: dict[str, float]) -> None:
        self.query.observe_ask(timings)
