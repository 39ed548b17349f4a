"""Prometheus metrics of a worker, read from its /metrics endpoint."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import httpx
from prometheus_client.parser import text_string_to_metric_families

__all__ = ["Samples", "parse", "scrape"]


@dataclass(frozen=True)
class Samples:
    """The samples of one scrape: (sample name, sorted labels) -> value."""

    values: Mapping[tuple[str, tuple[tuple[str, str], ...]], float]

    def total(self, name: str, **labels: str) -> float:
        """The sum of ``name``'s samples whose labels include ``labels`` (0 when none)."""
        wanted = set(labels.items())
        return sum(v for (n, ls), v in self.values.items() if n == name and wanted <= set(ls))

    def by_label(self, name: str, label: str) -> dict[str, float]:
        """``name``'s values summed per value of ``label``."""
        found: dict[str, float] = {}
        for (n, ls), v in self.values.items():
            key = dict(ls).get(label)
            if n == name and key is not None:
                found[key] = found.get(key, 0.0) + v
        return found

    def has(self, name: str) -> bool:
        """Whether the worker exports ``name`` at all (a family with no samples yet aside)."""
        return any(n == name for n, _ in self.values)

    def minus(self, earlier: Samples) -> Samples:
        """Counters since ``earlier`` (gauges too: subtract only what accumulates)."""
        return Samples({k: v - earlier.values.get(k, 0.0) for k, v in self.values.items()})


def parse(text: str) -> Samples:
    """The samples of a Prometheus text exposition."""
    values = {
        (s.name, tuple(sorted(s.labels.items()))): float(s.value)
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    return Samples(values)


async def scrape(port: int, host: str = "127.0.0.1") -> Samples:
    """Scrape http://host:port/metrics."""
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.get(f"http://{host}:{port}/metrics")
        response.raise_for_status()
    return parse(response.text)
