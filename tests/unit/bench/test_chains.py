"""The busy benchmark's dependency figures: waits read from the worker's log, the chain
bound they leave, and the gaps between commits by what each document did."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bench.chains import chain_seconds, dependency_figures, waits_in
from bench.commits import commit_gaps, commit_requests, commit_times
from factstream.topics.records import Document

T = datetime(2024, 1, 1, tzinfo=UTC)


def docs(n: int) -> list[Document]:
    return [
        Document(id=f"d{i}", namespace="busy", kind="article", text=f"text {i}", timestamp=T)  # type: ignore[arg-type]
        for i in range(n)
    ]


def test_the_nearest_wait_of_each_document_is_read_from_the_log() -> None:
    log = (
        "INFO 'd3' waits for the commit 3 before it: its plan may change the candidates\n"
        "INFO 'd3' waits for the commit 1 before it: its plan may change the candidates\n"
        "INFO decide 'd4' again: candidates added since its decision (commit)\n"
    )
    assert waits_in(log) == {"d3": 1}


def test_a_chain_of_neighbours_is_serial_and_independent_documents_are_not() -> None:
    stream = docs(8)
    chained = dependency_figures(stream, {f"d{i}": 1 for i in range(1, 8)}, 16, 0.5)
    assert chained["chain_s"] == 4.0 and chained["chain_bound_docs_per_s"] == 2.0
    assert chained["waited"] == 7 and chained["waited_share"] == 0.875
    # Every other document waits for the one two before it: two chains side by side.
    pairs = dependency_figures(stream, {f"d{i}": 2 for i in range(2, 8)}, 16, 0.5)
    assert pairs["chain_s"] == 2.0 and pairs["distance_at_most"]["1"] == 0
    free = dependency_figures(stream, {}, 16, 0.5)
    assert free["chain_s"] == 0.5 and free["distance_mean"] is None


def test_the_commit_time_lengthens_the_chain() -> None:
    stream = docs(8)
    # Independent documents: eight commits one after another.
    assert chain_seconds(stream, {}, 0.5, 0.1) == pytest.approx(0.5 + 8 * 0.1)
    # A chain of neighbours: an LM call and a commit per document.
    assert chain_seconds(stream, {f"d{i}": 1 for i in range(1, 8)}, 0.5, 0.1) == pytest.approx(
        8 * 0.6
    )


def _outcome(at: str, partition: int, offset: int) -> str:
    topic = f"p.factstream.documents[{partition}]@{offset}"
    return f"[2026-11-27 00:28:{at}] [1] [INFO] outcome {topic} applied \n"


LOG = (
    _outcome("00,000", 2, 0)  # the warm-up, another partition
    + _outcome("01,000", 1, 0)
    + _outcome("01,100", 1, 1)
    + "[2026-11-27 00:28:01,150] [1] [INFO] 'd2' waits for the commit 1 before it: ...\n"
    + _outcome("02,200", 1, 2)
    + "[2026-11-27 00:28:02,300] [1] [INFO] decide 'd3' again: candidates added since ...\n"
    + _outcome("02,800", 1, 3)
    + _outcome("02,900", 1, 4)
)


def test_commit_times_are_the_busiest_partitions_in_offset_order() -> None:
    times = commit_times(LOG, 5)
    assert [round(b - a, 3) for a, b in zip(times, times[1:], strict=False)] == [
        0.1,
        1.1,
        0.6,
        0.1,
    ]
    assert commit_times("", 5) == []


def test_gaps_are_filed_by_what_the_document_did() -> None:
    figures = commit_gaps(LOG, docs(5), {"d2": 1})
    kinds = figures["by_kind"]
    assert kinds["waited_1"] == {"documents": 1, "seconds": 1.1, "mean_s": 1.1, "median_s": 1.1}
    assert kinds["no_wait+redecided"]["seconds"] == 0.6
    assert kinds["no_wait"]["documents"] == 2 and figures["commit_s"] == 0.1
    assert figures["seconds"] == 1.9
    assert commit_gaps(LOG, docs(6), {}) == {}  # a document without a commit: no figures


def test_a_commits_requests_are_read_from_the_log_per_kind() -> None:
    log = (
        "x INFO commit 'd0' requests kafka=3 weaviate_read=2 weaviate_write=3\n"
        "x INFO commit 'd1' requests embed_model=2 kafka=3 weaviate_read=1 weaviate_write=3\n"
        "x INFO commit 'other' requests weaviate_read=9\n"
    )
    figures = commit_requests(log, docs(2))
    assert figures["commits"] == 2
    assert figures["weaviate_per_commit"] == 4.5
    assert figures["by_kind"]["embed_model"] == {
        "commits": 1,
        "per_commit": 1.0,
        "median": 1.0,
        "total": 2,
    }
    assert figures["by_kind"]["weaviate_read"]["total"] == 3
    assert commit_requests("", docs(2)) == {}
