"""The README's configuration table is the one the settings model generates."""

from __future__ import annotations

from pathlib import Path

from factstream.config import env_var_markdown

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_lists_every_setting_as_generated() -> None:
    text = README.read_text()
    block = text.split("<!-- env-table:start -->\n", 1)[1].split("<!-- env-table:end -->", 1)[0]
    assert block == env_var_markdown(), "regenerate it with: factstream config"
