"""Every figure of two results files side by side: ``python -m bench compare OLD.json NEW.json``.

No regression passes silently (issue 37): each number of either file (results/bench or
results/eval, any shape) is found by its path (``benchmarks.ask.p95_ms``, a list's items by
index) and printed with its old and new value and the change; a figure that moved by more
than ``--flag`` percent (10) is marked ``!``, one in only one file is printed too. Which way
is better depends on the figure, so the mark says only that it moved. The files' commits,
times and load averages head the list: figures from loaded runs differ without a cause.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

__all__ = ["Change", "changes", "figures", "lines", "main"]

_HEAD = ("commit", "timestamp", "created", "size", "machine.load_avg_at_start")

Change = tuple[str, float | None, float | None]  # path, old, new


def figures(data: Any, prefix: str = "") -> Iterator[tuple[str, float]]:
    """Every number in ``data`` (booleans aside) with its dotted path, in document order."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield from figures(value, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from figures(value, f"{prefix}[{i}]")
    elif isinstance(data, int | float) and not isinstance(data, bool):
        yield prefix, float(data)


def changes(old: Any, new: Any) -> list[Change]:
    """Each figure of either: its path, old value and new (None where a file lacks it)."""
    before, after = dict(figures(old)), dict(figures(new))
    paths = list(before) + [p for p in after if p not in before]
    return [(p, before.get(p), after.get(p)) for p in paths]


def _value(x: float | None) -> str:
    if x is None:
        return "-"
    return str(int(x)) if x.is_integer() and abs(x) < 1e15 else f"{x:.6g}"


def _get(data: Any, path: str) -> Any:
    for key in path.split("."):
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def lines(old: Any, new: Any, flag: float = 10.0) -> Iterator[str]:
    """The comparison as text: a head of what each run was, then one line a figure."""
    for key in _HEAD:
        a, b = _get(old, key), _get(new, key)
        if a is not None or b is not None:
            yield f"{key}: {a} -> {b}"
    if isinstance(old, list) or isinstance(new, list):  # evaluation rows carry their commit
        heads = {_get(r, "commit") for d in (old, new) if isinstance(d, list) for r in d}
        yield f"commits of the rows: {sorted(str(h) for h in heads)}"
    for path, a, b in changes(old, new):
        if a is None or b is None:
            yield f"  {path}: {_value(a)} -> {_value(b)} (in one file only)"
            continue
        delta = b - a
        if a:
            pct = 100.0 * delta / abs(a)
            mark = "!" if abs(pct) > flag else " "
            yield f"{mark} {path}: {_value(a)} -> {_value(b)} ({delta:+.6g}, {pct:+.1f}%)"
        else:
            mark = "!" if delta else " "
            yield f"{mark} {path}: {_value(a)} -> {_value(b)} ({delta:+.6g})"


def main(argv: list[str] | None = None) -> int:
    """``compare OLD.json NEW.json [--flag PERCENT]``: print every figure's change."""
    args = list(sys.argv[1:] if argv is None else argv)
    flag = 10.0
    if "--flag" in args:
        at = args.index("--flag")
        flag = float(args[at + 1])
        del args[at : at + 2]
    if len(args) != 2:
        print("usage: python -m bench compare OLD.json NEW.json [--flag PERCENT]", file=sys.stderr)
        return 2
    try:
        old, new = (orjson.loads(Path(p).read_bytes()) for p in args)
    except (OSError, orjson.JSONDecodeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for line in lines(old, new, flag):
        print(line)
    return 0
