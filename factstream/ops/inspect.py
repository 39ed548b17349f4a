"""Read a namespace's facts for people: list or search, as of a time and at a valid time,
with histories and valid intervals."""

from __future__ import annotations

from datetime import datetime

from rich.table import Table

from factstream.clients import Clients
from factstream.console import history_line
from factstream.store.rules import valid_interval
from factstream.temporal.intervals import ValidInterval

__all__ = ["fact_table"]


async def fact_table(
    clients: Clients,
    namespace: str,
    search: str | None,
    as_of: datetime | None,
    include_false: bool,
    limit: int,
    *,
    alpha: float,
    valid: ValidInterval | None = None,
) -> Table:
    """A table of the namespace's facts (searched, with hybrid weight ``alpha``, if ``search``
    is given), those that held at some instant of ``valid`` if given."""
    scores: dict[str, float] = {}
    if search:
        vector = await clients.embedder.embed(search)
        hits = await clients.store.search(
            namespace,
            search,
            vector,
            as_of=as_of,
            top_k=min(limit, 100),
            min_similarity=-1.0,
            alpha=alpha,
            valid=valid,
        )
        found = [h.fact for h in hits]
        scores = {h.fact.fact_id: h.similarity for h in hits}
    else:
        page = await clients.store.list_facts(
            namespace, as_of=as_of, include_false=include_false, limit=limit, valid=valid
        )
        found = page.facts
    extra_column = "similarity" if search else "replaces"
    table = Table("fact", "true", "text", extra_column, "valid", "history")
    for fact in found:
        extra = f"{scores[fact.fact_id]:.3f}" if search else (fact.replaces or "")[:8]
        truth = fact.truth if as_of is None else fact.truth_at(as_of)
        table.add_row(
            fact.fact_id[:8],
            str(truth),
            fact.text,
            extra,
            valid_interval(fact, as_of).describe(),
            history_line(fact),
        )
    return table
