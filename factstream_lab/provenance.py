"""Which commit a results file comes from: every results writer stamps it (issue 37).

``commit()`` is ``git describe --always --dirty`` of the checkout the code runs from
(``-dirty``: uncommitted changes), or "unknown" outside a git checkout. ``stamped`` adds it
to a results object: a dict gets a ``commit`` key, a list (the rows some evaluations
write) gets it in each row, so readers of the existing shapes keep working.
"""

from __future__ import annotations

import subprocess
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["commit", "stamped"]

_CHECKOUT = Path(__file__).resolve().parents[1]


@cache
def commit() -> str:
    """``git describe --always --dirty`` of this checkout, or "unknown"."""
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty"],  # noqa: S607 - git on PATH
            cwd=_CHECKOUT,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip() or "unknown"


def stamped(results: Any) -> Any:
    """``results`` with the commit: a dict's ``commit`` key (one it has is kept), each
    dict row of a list likewise; anything else as it is."""
    if isinstance(results, dict):
        return {**results, "commit": results.get("commit", commit())}
    if isinstance(results, list):
        return [stamped(row) if isinstance(row, dict) else row for row in results]
    return results
