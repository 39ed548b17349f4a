"""commit-msg hook: refuse a commit whose subject has 72 characters or more.

    python .ci/commit_subject.py .git/COMMIT_EDITMSG

The subject is the message's first line that is neither blank nor a comment ('#', which git
strips after this hook runs). The detail goes in the body, after a blank line.
"""

from __future__ import annotations

import sys
from pathlib import Path

MAX_SUBJECT = 71  # characters: "under 72"


def subject(message: str) -> str:
    """The first line of ``message`` that git keeps and that has text."""
    for line in message.splitlines():
        if line.strip() and not line.startswith("#"):
            return line.rstrip()
    return ""


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: commit_subject.py MESSAGE_FILE", file=sys.stderr)
        return 2
    line = subject(Path(argv[0]).read_text(encoding="utf-8", errors="replace"))
    if len(line) > MAX_SUBJECT:
        print(
            f"commit subject is {len(line)} characters, at most {MAX_SUBJECT}: keep it short "
            f"and put the detail in the body, after a blank line.\n  {line}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
