"""The README quotes what the code generates: the settings table, the benchmark table."""

from __future__ import annotations

from pathlib import Path

from bench.report import load, markdown
from factstream.config import env_var_markdown

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_lists_every_setting_as_generated() -> None:
    text = README.read_text()
    block = text.split("<!-- env-table:start -->\n", 1)[1].split("<!-- env-table:end -->", 1)[0]
    assert block == env_var_markdown(), "regenerate it with: factstream config"


def test_readme_benchmark_tables_are_the_named_results_files() -> None:
    blocks = README.read_text().split("<!-- bench-table:start ")[1:]
    assert blocks, "the README quotes no benchmark results"
    for block in blocks:
        name, rest = block.split(" -->\n", 1)
        results = README.parent / name.strip()
        assert results.is_file(), f"the README quotes {results}, not in the repository"
        quoted = rest.split("<!-- bench-table:end -->", 1)[0]
        assert quoted == markdown(load(results)), f"regenerate: python -m bench.report {name}"
