"""The busy benchmark's dependency figures: waits read from the worker's log, and the chain
bound they leave."""

from __future__ import annotations

from datetime import UTC, datetime

from bench.chains import dependency_figures, waits_in
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
