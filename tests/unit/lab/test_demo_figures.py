"""docs/demo.md quotes the demo's results file, rendered by the code, not typed by hand."""

from __future__ import annotations

import json
from pathlib import Path

from factstream_lab.demo.story import figures_markdown

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "demo.md"
RESULTS = ROOT / "results" / "demo" / "clark-news-40.json"
START = "<!-- demo-figures:start results/demo/clark-news-40.json -->\n"
END = "<!-- demo-figures:end -->"


def test_the_demo_page_quotes_its_results_file() -> None:
    figures = json.loads(RESULTS.read_text())
    quoted = PAGE.read_text().split(START, 1)[1].split(END, 1)[0]
    assert quoted == figures_markdown(figures), "regenerate: figures_markdown(results file)"


def test_the_results_file_holds_the_issues_figures() -> None:
    figures = json.loads(RESULTS.read_text())
    assert figures["documents"] == 40 and figures["model"] == "smollm2-135m-instruct"
    grounding = figures["story"]["grounding"]
    assert grounding["kept"] + grounding["refused"] > 0
    audit = figures["audit"]
    assert audit["documents"] == 40 and audit["kept_facts"] > 0


def test_the_demo_reads_the_documents_shipped_with_the_repository() -> None:
    from factstream_lab.demo.run import DEFAULT_DEMO_DATA

    assert DEFAULT_DEMO_DATA == ROOT / "deploy" / "demo" / "clark-news-40.jsonl"
    assert len(DEFAULT_DEMO_DATA.read_text().splitlines()) == 40
