"""How big each benchmark runs: the full set (`make bench`) or the CI smoke version."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FULL", "SIZES", "SMOKE", "Size"]


@dataclass(frozen=True)
class Size:
    """Workload sizes of one run."""

    name: str
    throughput_docs: int  # documents timed through editor + materializer
    throughput_lanes: int  # namespaces edited at once (the worker's partition actors)
    throughput_trials: int  # repeats on fresh namespaces; the median ratio is reported
    token_docs: int  # CLARK-News documents classified both ways on the real LM
    token_max_facts: int  # of the facts retrieved per document, classify at most this many
    ask_facts: tuple[int, ...]  # facts in the namespace, one measurement each
    ask_queries: int  # questions timed per measurement
    e2e_docs: int  # documents through a worker on the real LM
    e2e_questions: int  # questions answered by the real LM
    backlog_docs: int  # queued documents the worker drains
    backlog_namespaces: int
    busy_docs: int  # documents of the one busy namespace, at each window
    busy_windows: tuple[int, ...]  # documents in flight (FACTSTREAM_EDITOR_WINDOW)
    busy_latency_ms: float  # the stub LM's time per call
    embed_questions: int  # questions embedded one at a time, per runtime
    embed_docs: int  # documents embedded in one batch, per runtime
    # busy: FACTSTREAM_EDITOR_DEPENDENCIES policies also run at W=16 (beside the configured)
    busy_policies: tuple[str, ...] = ()
    # busy: the worker's FACTSTREAM_LM_MAX_CONCURRENCY (None: 4 x the widest window)
    busy_lm_concurrency: int | None = None


FULL = Size(
    name="full",
    throughput_docs=320,
    throughput_lanes=8,
    throughput_trials=3,
    token_docs=10,
    token_max_facts=100,
    ask_facts=(10_000, 100_000),
    ask_queries=200,
    e2e_docs=16,
    e2e_questions=8,
    backlog_docs=10_000,
    backlog_namespaces=32,
    busy_docs=300,
    busy_windows=(1, 4, 16, 32),
    busy_latency_ms=500.0,
    embed_questions=200,
    embed_docs=320,
)

SMOKE = Size(
    name="smoke",
    throughput_docs=6,
    throughput_lanes=2,
    throughput_trials=1,
    token_docs=1,
    token_max_facts=1,
    ask_facts=(300,),
    ask_queries=10,
    e2e_docs=1,
    e2e_questions=1,
    backlog_docs=20,
    backlog_namespaces=3,
    busy_docs=4,
    busy_windows=(1, 2),
    busy_latency_ms=50.0,
    embed_questions=5,
    embed_docs=8,
)

SIZES = {size.name: size for size in (FULL, SMOKE)}
