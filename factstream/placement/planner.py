"""Plan a placement map from per-namespace volume: whole namespaces, spread evenly.

Namespaces already placed (in the current map, or seen on the documents topic at a
partition) stay where they are: moving one while it has unread documents would break its
order. The others go, busiest first, each to the partition with the fewest documents so far
(placed namespaces' volume counted): the longest-processing-time-first rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from factstream.streams.placement import Placement, PlacementError

__all__ = ["Plan", "plan", "spread"]


@dataclass(frozen=True)
class Plan:
    """A proposed map and the spread it gives the observed volume, before and after."""

    placement: Placement
    kept: int  # namespaces left where they were
    placed: int  # namespaces given a partition by this plan
    before: list[int]  # documents per partition as the volume lies now
    after: list[int]  # documents per partition under the plan

    @staticmethod
    def imbalance(load: list[int]) -> float:
        """The busiest partition over the mean (1.0: even); what caps scaling by workers."""
        mean = sum(load) / len(load) if load else 0.0
        return round(max(load) / mean, 3) if mean else 1.0


def spread(volume: Mapping[str, int], placement: Placement, partitions: int) -> list[int]:
    """Documents per partition when ``volume``'s namespaces go where ``placement`` puts them."""
    load = [0] * partitions
    for namespace, count in volume.items():
        load[placement.partition(namespace, partitions)] += count
    return load


def plan(
    volume: Mapping[str, int],
    partitions: int,
    placed: Mapping[str, int] | None = None,
    *,
    now: Placement | None = None,
) -> Plan:
    """A map that spreads ``volume`` (documents per namespace) over ``partitions``.

    Args:
        volume: documents per namespace, observed or expected.
        partitions: the documents topic's partition count.
        placed: namespaces that must keep their partition (already placed, with documents
            possibly unread); they are part of the map, and their volume counts.
        now: how the volume lies today (the current map; hashing for the rest), for the
            "before" figures; the empty placement when not given.
    """
    if partitions < 1:
        raise PlacementError("a placement needs at least one partition")
    placed = dict(placed or {})
    for namespace, partition in placed.items():
        if not 0 <= partition < partitions:
            raise PlacementError(
                f"namespace {namespace!r} sits on partition {partition}, not one of "
                f"0..{partitions - 1}: plan with --move once its documents are read"
            )
    load = [0] * partitions
    for namespace, partition in placed.items():
        load[partition] += volume.get(namespace, 0)
    mapping = dict(placed)
    free = sorted((n for n in volume if n not in placed), key=lambda n: (-volume[n], n))
    for namespace in free:
        target = min(range(partitions), key=lambda p: (load[p], p))
        mapping[namespace], load[target] = target, load[target] + volume[namespace]
    result = Placement(mapping, partitions)
    return Plan(
        placement=result,
        kept=len(placed),
        placed=len(free),
        before=spread(volume, now or Placement(), partitions),
        after=spread(volume, result, partitions),
    )
