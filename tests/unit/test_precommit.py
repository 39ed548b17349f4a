""".pre-commit-config.yaml: the lint hooks run the venv's tools; commit subjects under 72."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
HOOK = ROOT / ".ci" / "commit_subject.py"


def _hooks() -> dict[str, dict[str, object]]:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    return {hook["id"]: hook for repo in config["repos"] for hook in repo["hooks"]}


def _check(message: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(message, encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(HOOK), str(path)], capture_output=True, text=True, check=False
    )


def test_lint_hooks_are_the_make_lint_tools_from_the_venv() -> None:
    hooks = _hooks()
    assert set(hooks) == {"ruff", "ruff-format", "mypy", "commit-subject"}
    for hook in hooks.values():
        assert hook["language"] == "system"
        assert str(hook["entry"]).startswith(".venv/bin/"), hook
    assert hooks["commit-subject"]["stages"] == ["commit-msg"]
    assert str(hooks["commit-subject"]["entry"]).endswith(".ci/commit_subject.py")


@pytest.mark.parametrize(
    ("subject", "refused"),
    [("x" * 71, False), ("x" * 72, True), ("é" * 71, False), ("é" * 72, True)],
)
def test_a_subject_of_72_characters_or_more_is_refused(
    subject: str, refused: bool, tmp_path: Path
) -> None:
    body = "The detail goes in the body, where a line may be longer than the subject's limit."
    done = _check(f"{subject}\n\n{body}\n", tmp_path)
    assert done.returncode == (1 if refused else 0), done.stderr
    assert (f"is {len(subject)} characters, at most 71" in done.stderr) is refused


def test_the_subject_is_the_first_line_git_keeps(tmp_path: Path) -> None:
    template = "# Please enter the commit message" + " for your changes" * 5 + "\n"
    assert _check(f"\n{template}short subject\n\nbody\n{template}", tmp_path).returncode == 0
    assert _check(f"{template}{'y' * 80}\n", tmp_path).returncode == 1
