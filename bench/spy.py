"""Where a process's Python CPU went, from a py-spy raw profile (issue 26: the pipeline's
CPU outside the model).

    py-spy record -r 100 -f raw -o RAW -- python -m bench --only throughput
    python -m bench.spy RAW [--out results/bench/STAMP-throughput-spy.json]

py-spy's idle filter keeps threads blocked in native code: the ONNX model's ``Session.run``
(which waits for a core as much as it computes) and idle pool threads. So only the main
thread, the event loop, is read as CPU: a sample of it is 1/rate seconds, its epoll wait
left out. Each goes to an owner, the innermost frame's top-level package that is not the
standard library (``factstream``, ``bench``, ``aiokafka``, ``weaviate``, ``grpc``,
``httpx`` ...), else the standard library (the event loop itself); also counted per
``factstream`` module (innermost own frame) and per innermost function. Samples of the
other threads are counted apart (the model's ``encode`` and the rest).
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

import typer

__all__ = ["owner", "summarise"]

_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]+):\d+\)$")
_MAIN = "_run_module_as_main"
_MODEL = "factstream/embed/onnx_embedder.py"
_WAIT = ("select (selectors.py)", "EpollSelector.select (selectors.py)")
_STDLIB = "stdlib (the event loop)"
_TOP = 25


def _frames(stack: str) -> list[tuple[str, str]]:
    """(function, file) of each frame, outermost first."""
    found = []
    for part in stack.split(";"):
        match = _FRAME.match(part.strip())
        if match:
            found.append((match["func"], match["file"]))
    return found


def _package(file: str) -> str | None:
    """The top-level package of a py-spy file path (relative to sys.path); None: stdlib."""
    top = file.split("/", 1)[0].removesuffix(".py")
    if top.startswith("<") or top in sys.stdlib_module_names or file.startswith("/"):
        return None
    return top


def owner(stack: str) -> str:
    """The owner of one main-thread sample (see the module docstring)."""
    for func, file in reversed(_frames(stack)):
        package = _package(file)
        if package is not None:
            return package
        if func.endswith("_run_once"):  # the event loop's own work, not its caller's
            break
    return _STDLIB


def summarise(raw: str, rate: int, top: int | None = _TOP) -> dict[str, object]:
    """The main thread's CPU seconds by owner, by own module and by innermost function
    (the ``top`` of each, None: every one); the other threads' samples apart."""
    owners: Counter[str] = Counter()
    modules: Counter[str] = Counter()
    functions: Counter[str] = Counter()
    other: Counter[str] = Counter()
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        frames = _frames(stack)
        if not frames or not count_text.isdigit():
            continue
        count = int(count_text)
        if frames[0][0] != _MAIN:
            model = any(file == _MODEL and func.endswith("encode") for func, file in frames)
            other["the model's encode" if model else "other threads"] += count
            continue
        func, file = frames[-1]
        if f"{func} ({file})" in _WAIT:
            other["main thread: epoll wait"] += count
            continue
        owners[owner(stack)] += count
        own = [f for _f, f in frames if _package(f) == "factstream"]
        if own:
            modules[own[-1].removeprefix("factstream/")] += count
        functions[f"{func} ({file})"] += count
    return {
        "rate_hz": rate,
        "main_thread_cpu_s": round(sum(owners.values()) / rate, 2),
        "by_owner_cpu_s": {k: round(v / rate, 2) for k, v in owners.most_common()},
        "by_own_module_cpu_s": {k: round(v / rate, 2) for k, v in modules.most_common(top)},
        "by_function_cpu_s": {k: round(v / rate, 2) for k, v in functions.most_common(top)},
        "not_counted_samples": dict(other),
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
