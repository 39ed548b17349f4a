"""The store's search as at other commits against this tree's, on one filled namespace in one
process (issue 37's ask regression), so that the machine's load falls on all alike.

    python -m bench.ask_search_ab --keep PREFIX [--facts 100000] [--queries 200]
        [--commit 182d76a --commit main]

Fills a namespace as ``bench.ask`` does (or reuses one ``--keep`` filled), then asks the
CLARK-News questions. Each ``--commit``'s ``factstream/store/weaviate_store.py`` is read
from git (``git show``) and loaded as a module of its own; its ``search`` runs on this
tree's store object (the same client, tenant and checks), so only the search's own code
differs. For each question, in a rotating order: the search of each commit and of this
tree, and ``QueryEngine.retrieve`` (the ask benchmark's path) with each search in place.
Counted, which do not move with the load: Weaviate reads a search and a retrieval sends
and the candidates they return, the questions whose search asked more than once; and
whether each commit's hits equal this tree's (fact ids, in order). With ``--hops`` each
question also has a 2-hop one (``bench.ask.hop_questions``, mode multi_hop: two
entity-filtered searches, ``ask.chain``) asked through ``QueryEngine.gather`` with each
search and that commit's ``chain.hop_facts`` in place, counted alike; its hops' fact ids
are compared. Writes
``<stamp>-ask-search-ab.json``.
"""

from __future__ import annotations

import math
import subprocess
import sys
import types
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer

from bench import kept
from bench.ask import _engine, hop_questions
from bench.corpus import DEFAULT_DATA, load, pool_sentences
from bench.measure import summary_ms
from factstream.ask import multihop
from factstream.ask.query import AskRequest
from factstream.ask.valid_time import question_valid_time
from factstream.store.base import SearchHit
from factstream.store.weaviate_store import WeaviateFactStore
from factstream_lab import provenance

__all__ = ["main"]

_NAMESPACE = kept.NAMESPACE
_WARM_UP = kept.WARM_UP
_TREE = "this tree"
_STORE = "factstream/store/weaviate_store.py"
_CHAIN = "factstream/ask/chain.py"

Search = Callable[..., Awaitable[list[SearchHit]]]


def _module_at(commit: str, path: str) -> types.ModuleType:
    """The module at ``path`` as ``commit`` wrote it, loaded under a name of its own."""
    source = _git("show", f"{commit}:{path}")
    stem = path.removesuffix(".py").replace("/", "_")
    name = f"bench._{stem}_at_{commit.replace('-', '_')}"
    module = types.ModuleType(name)
    module.__file__ = f"{commit}:{path}"
    sys.modules[name] = module  # dataclasses and typing look their module up
    exec(compile(source, module.__file__, "exec"), module.__dict__)  # noqa: S102
    return module


def _search_at(commit: str) -> Search:
    """``WeaviateFactStore.search`` as ``commit`` wrote it, its module's helpers with it."""
    search: Search = _module_at(commit, _STORE).WeaviateFactStore.search
    return search


def _hop_facts_at(commit: str) -> Callable[..., Awaitable[Any]]:
    """``chain.hop_facts`` as ``commit`` wrote it (the 2-hop asks' keyword side)."""
    hop_facts: Callable[..., Awaitable[Any]] = _module_at(commit, _CHAIN).hop_facts
    return hop_facts


class _Reads:
    """Counts the store's reads (``_objects``) and the objects they return."""

    def __init__(self, store: WeaviateFactStore) -> None:
        self.requests, self.objects = 0, 0
        inner = store._objects  # noqa: SLF001

        async def counted(*args: Any, **kwargs: Any) -> Any:
            found = await inner(*args, **kwargs)
            self.requests += 1
            self.objects += len(found)
            return found

        store._objects = counted  # type: ignore[method-assign]  # noqa: SLF001

    def mark(self) -> tuple[int, int]:
        return self.requests, self.objects


def _hop_asked(data: Path, facts: int, count: int) -> list[str]:
    """The ask benchmark's 2-hop questions on the names of the pool ``facts`` facts use."""
    needed = math.ceil(math.sqrt(facts)) + 2  # as bench.ask._pool: n * (n - 1) facts
    return hop_questions(pool_sentences(load(data), max(needed, 64)), count)


async def _measure(
    clients: Any,
    settings: Any,
    asked: list[str],
    commits: list[str],
    hops: list[str] | None = None,
) -> dict[str, Any]:
    store: WeaviateFactStore = clients.store
    engine = _engine(clients, settings)
    searches: dict[str, Search] = {c: _search_at(c) for c in commits}
    searches[_TREE] = WeaviateFactStore.search
    reads = _Reads(store)
    top_k, alpha, floor = settings.api.top_k, settings.api.alpha, settings.api.min_similarity
    times: dict[str, list[float]] = {}
    counts: dict[str, Counter[str]] = {}
    requests_seen: dict[str, Counter[int]] = {name: Counter() for name in searches}
    ids: dict[str, list[str]] = {}
    differ: Counter[str] = Counter()

    def counted(key: str, run: Callable[[], Awaitable[object]]) -> Callable[[], Awaitable[None]]:
        async def part() -> None:
            before = reads.mark()
            got = await run()
            after = reads.mark()
            tally = counts.setdefault(key, Counter())
            tally["calls"] += 1
            tally["requests"] += after[0] - before[0]
            tally["objects"] += after[1] - before[1]
            if key in searches:
                requests_seen[key][after[0] - before[0]] += 1
                ids[key] = [h.fact.fact_id for h in got]  # type: ignore[attr-defined]

        return part

    async def retrieve(search: Search, text: str) -> None:
        store.search = partial(search, store)  # type: ignore[method-assign,assignment]
        try:
            await engine.retrieve(AskRequest(text, _NAMESPACE), {})
        finally:
            del store.search

    async def gather(name: str, search: Search, text: str) -> None:
        store.search = partial(search, store)  # type: ignore[method-assign,assignment]
        vars(multihop)["hop_facts"] = chains[name]
        try:
            got = await engine.gather(AskRequest(text, _NAMESPACE, mode="multi_hop"), {})
        finally:
            del store.search
            vars(multihop)["hop_facts"] = chains[_TREE]
        hop_ids[name] = [[f.fact.fact_id for f in hop.facts] for hop in got.hops]

    hop_ids: dict[str, list[list[str]]] = {}
    chains = {c: _hop_facts_at(c) for c in commits} if hops else {}
    chains[_TREE] = vars(multihop)["hop_facts"]

    for i, text in enumerate(asked):
        vector = list(await clients.embedder.embed(text))
        valid = question_valid_time(text, valid=None, as_of=None, now=datetime.now(UTC))
        args = (store, _NAMESPACE, valid.search_text, vector)
        kw = {
            "as_of": None,
            "top_k": top_k,
            "min_similarity": floor,
            "alpha": alpha,
            "valid": valid.interval,
        }
        parts: dict[str, Callable[[], Awaitable[object]]] = {}
        for name, search in searches.items():
            parts[name] = counted(name, partial(search, *args, **kw))
            parts[f"retrieve, {name}"] = counted(
                f"retrieve, {name}", partial(retrieve, search, text)
            )
            if hops:
                parts[f"multi_hop, {name}"] = counted(
                    f"multi_hop, {name}", partial(gather, name, search, hops[i])
                )
        await kept.rotated(i, parts, times)
        for name in commits:
            differ[name] += ids[name] != ids[_TREE]
            if hops:
                differ[f"multi_hop, {name}"] += hop_ids[name] != hop_ids[_TREE]
    tree_times = times[_TREE]
    result: dict[str, Any] = {}
    for name, seconds in times.items():
        tally = counts[name]
        result[name] = {
            **summary_ms(seconds),
            "requests_per_question": round(tally["requests"] / tally["calls"], 3),
            "objects_per_question": round(tally["objects"] / tally["calls"], 2),
        }
        if name in searches:
            result[name]["questions_by_requests"] = dict(sorted(requests_seen[name].items()))
            result[name]["p95_over_this_tree"] = round(
                summary_ms(seconds)["p95_ms"] / summary_ms(tree_times)["p95_ms"], 2
            )
            result[name]["p50_over_this_tree"] = round(
                summary_ms(seconds)["p50_ms"] / summary_ms(tree_times)["p50_ms"], 2
            )
    result["questions"] = len(asked)
    result["hits_differ_from_this_tree"] = dict(differ)
    return result


Commits = Annotated[list[str], typer.Option("--commit", help="A commit whose search to compare.")]


def main(
    facts: int = 100_000,
    queries: int = 200,
    out: Path = Path("results/bench"),
    data: Path = DEFAULT_DATA,
    keep: kept.Keep = None,
    commit: Commits = ["182d76a", "main"],  # noqa: B006 - typer's default list
    hops: Annotated[bool, typer.Option(help="Also 2-hop asks (mode multi_hop).")] = False,
) -> None:
    """Fill, run each commit's search and this tree's in turn, write the results file."""

    async def run(
        facts: int, queries: int, _out: Path, data: Path, keep: str | None
    ) -> dict[str, Any]:
        async with kept.filled(facts, data, keep, "ask-search-ab") as ready:
            asked = kept.asked(data, queries)
            two_hops = _hop_asked(data, facts, len(asked)) if hops else None
            found = await _measure(ready.clients, ready.settings, asked, commit, two_hops)
        revs = {c: _git("rev-parse", "--short", c).strip() for c in commit}
        return {**ready.result, "commit": provenance.commit(), "against": revs, "searches": found}

    kept.cli(run, "ask-search-ab", "")(facts, queries, out, data, keep)


def _git(*args: str) -> str:
    command = ["git", *args]  # git on PATH, arguments of our own
    done = subprocess.run(command, check=True, capture_output=True, text=True)  # noqa: S603
    return done.stdout


if __name__ == "__main__":
    typer.run(main)
