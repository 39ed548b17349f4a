"""Where a process's CPU went, from a py-spy raw profile (issue 26: the pipeline's CPU
outside the model).

    py-spy record -r 100 -f raw -o RAW -- python -m bench --only throughput
    python -m bench.spy RAW [--out bench/results/STAMP-throughput-spy.json]

py-spy samples only threads that run (its idle filter), so a sample is about 1/rate CPU
seconds. Each sample goes to an owner: the embedding model when the stack runs the ONNX
embedder's ``encode``, else the innermost frame of a third-party package (aiokafka,
weaviate, grpc, pydantic, ...) or of ``factstream``, else the standard library's event
loop and what it calls. Also counted per ``factstream`` module (innermost own frame) and
per third-party function (innermost frame), the leading ones.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import typer

__all__ = ["owner", "summarise"]

_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^():]+):\d+\)$")
_SITE = re.compile(r"site-packages/(?P<pkg>[A-Za-z0-9_]+)")
_MODEL = "onnx_embedder.py"
_TOP = 25


def _frames(stack: str) -> list[tuple[str, str]]:
    """(function, file) of each frame, outermost first; thread labels dropped."""
    found = []
    for part in stack.split(";"):
        match = _FRAME.match(part.strip())
        if match:
            found.append((match["func"], match["file"]))
    return found


def _package(file: str) -> str | None:
    """The third-party package of ``file``, ``factstream`` for ours, else None (stdlib)."""
    site = _SITE.search(file)
    if site:
        return site["pkg"]
    if file.startswith("factstream/") or "/factstream/" in file:
        return "factstream"
    return None


def owner(stack: str) -> str:
    """The owner of one sample's stack (see the module docstring)."""
    frames = _frames(stack)
    if any(file.endswith(_MODEL) and func.endswith("encode") for func, file in frames):
        return "embedding model"
    for _func, file in reversed(frames):
        package = _package(file)
        if package is not None:
            return package
    return "stdlib (event loop, threads)"


def summarise(raw: str, rate: int) -> dict[str, object]:
    """Samples and CPU seconds by owner, by own module and by third-party function."""
    owners: Counter[str] = Counter()
    modules: Counter[str] = Counter()
    functions: Counter[str] = Counter()
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        who = owner(stack)
        owners[who] += count
        frames = _frames(stack)
        own = [file for _f, file in frames if _package(file) == "factstream"]
        if own and who != "embedding model":
            modules[own[-1].split("factstream/", 1)[-1]] += count
        if frames and who not in ("embedding model", "factstream"):
            func, file = frames[-1]
            functions[f"{func} ({file.split('site-packages/', 1)[-1]})"] += count
    total = sum(owners.values())
    return {
        "rate_hz": rate,
        "samples": total,
        "cpu_s": round(total / rate, 1),
        "by_owner_cpu_s": {k: round(v / rate, 2) for k, v in owners.most_common()},
        "by_own_module_cpu_s": {k: round(v / rate, 2) for k, v in modules.most_common(_TOP)},
        "by_library_function_cpu_s": {
            k: round(v / rate, 2) for k, v in functions.most_common(_TOP)
        },
    }


def main(raw: Path, rate: int = 100, out: Path | None = None) -> None:
    """Print (and write) the summary of a py-spy raw profile taken at ``rate`` Hz."""
    result = summarise(raw.read_text(), rate)
    text = json.dumps(result, indent=2)
    if out is not None:
        out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    typer.run(main)
