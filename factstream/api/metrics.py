"""The API's Prometheus metrics, registered on the injected registry (clients.metrics)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from prometheus_client import Counter

from factstream.metrics import Metrics, MetricSpec, QueryMetrics

__all__ = ["ApiMetrics"]

_REQUESTS = MetricSpec(
    Counter,
    "factstream_api_requests",
    "route method status",
    "HTTP requests by route template, method and status code.",
)


@dataclass(frozen=True)
class ApiMetrics:
    """HTTP requests by route and status; ask latency per stage (shared with the Kafka path)."""

    requests: Counter
    query: QueryMetrics

    @classmethod
    def create(cls, metrics: Metrics) -> ApiMetrics:
        requests = cast(Counter, _REQUESTS.build(metrics.registry))  # _REQUESTS is a Counter
        return cls(requests=requests, query=metrics.query)

    def observe_ask(self, timings: dict[str, float]) -> None:
        self.query.observe_ask(timings)
