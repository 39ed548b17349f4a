"""The Makefile: every target phony and named by `make help`; `make test` in CI's order."""

from __future__ import annotations

import re
from pathlib import Path

MAKEFILE = Path(__file__).resolve().parents[2] / "Makefile"
# A rule's first line: a plain name, a colon, then not '=' (that is `NAME := value`).
_RULE = re.compile(r"^([A-Za-z][\w-]*)\s*:(?!=)(.*)$")


def _lines() -> list[str]:
    """The Makefile's logical lines (backslash continuations joined)."""
    return MAKEFILE.read_text().replace("\\\n", " ").splitlines()


def _rules() -> dict[str, list[str]]:
    """Each named target's prerequisites (file targets such as $(VENV)/.installed left out)."""
    rules = {}
    for line in _lines():
        if match := _RULE.match(line):
            rules[match[1]] = match[2].split()
    return rules


def _special(name: str) -> list[str]:
    """The prerequisites of a special target such as .PHONY."""
    found: list[str] = []
    for line in _lines():
        if line.startswith(f"{name}:"):
            found += line.split(":", 1)[1].split()
    return found


def _recipe(target: str) -> list[str]:
    """The recipe lines of ``target``, stripped."""
    lines = _lines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    recipe = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        recipe.append(line.strip())
    return recipe


def test_every_target_is_phony_and_every_phony_name_is_a_target() -> None:
    assert sorted(_rules()) == sorted(_special(".PHONY"))


def test_help_names_every_target_once() -> None:
    named = [m[1] for line in _recipe("help") for m in re.finditer(r"\bmake ([\w-]+)", line)]
    assert len(named) == len(set(named)), named
    assert sorted(named) == sorted(_rules())


def test_make_test_is_lint_then_unit_then_integration_one_at_a_time() -> None:
    assert _rules()["test"] == ["lint", "test-unit", "test-integration"]
    assert ".NOTPARALLEL" in {line.split(":", 1)[0] for line in _lines()}
    # The two pytest runs split the suite by the integration marker: together, every test.
    assert _recipe("test-unit") == ['$(BIN)/pytest -m "not integration"']
    assert _recipe("test-integration") == ["$(BIN)/pytest -m integration"]
