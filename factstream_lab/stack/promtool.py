"""promtool, Prometheus's checker of rules and configs, built with Go into the cache folder.

The monitoring tests run ``promtool check rules`` and ``check config`` on ``monitoring/``.
``go install ...promtool@version`` cannot build it: older Prometheus releases carry replace
and exclude directives, which ``go install`` refuses, and the newest asks for dependency
versions the Go module proxy does not serve. So ``deploy/local/promtool/go.mod`` pins a
release as a dependency of a small module of our own, which may replace those few versions
by the ones the release before it used; ``go build`` runs in a copy of it.

    python -m factstream_lab.stack.promtool     # build (cached) and print the path
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from factstream_lab.stack.assets import assets_dir
from factstream_lab.stack.process import CacheLayout, require_tool, run_step, staged_folder
from factstream_lab.stack.progress import Outcome, Progress, print_tool_path

__all__ = ["promtool_binary", "provision_promtool"]

_PACKAGE = "github.com/prometheus/prometheus/cmd/promtool"
_STEP = f"go build {_PACKAGE} (a few minutes)"
_GO_HINT = (
    "install Go >= 1.21 (it fetches the toolchain Prometheus asks for); see https://go.dev/dl"
)


def _module() -> Path:
    return assets_dir() / "promtool"


def promtool_binary(layout: CacheLayout) -> Path:
    """Where the build of the pinned module is cached (keyed by its go.mod and go.sum)."""
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum"):
        digest.update((_module() / name).read_bytes())
    return layout.root / "promtool" / digest.hexdigest()[:10] / "promtool"


def provision_promtool(layout: CacheLayout, progress: Progress | None = None) -> Path:
    """promtool's path, building it first if the cache has none (a few minutes).

    Args:
        layout: The cache folder.
        progress: Where the build step is reported; silent by default.

    Raises:
        ToolMissing: Go is not installed.
        BuildStepFailed: the build failed; the error names its log and shows its tail.
    """
    progress = progress or Progress()
    binary, title = promtool_binary(layout), "build promtool"
    if binary.exists():
        progress.report("promtool", title, Outcome.CACHED, str(binary))
        return binary
    go = require_tool("promtool", "go", _GO_HINT)
    log = layout.log("promtool-build")
    with progress.step("promtool", title, _STEP, log) as step:
        _build(go, binary, log, step.tick)
        step.ends(Outcome.BUILT, str(binary))
    return binary


def _build(go: str, binary: Path, log: Path, tick: Callable[[], None]) -> None:
    with staged_folder(binary.parent) as staging:
        source = staging / "src"
        source.mkdir()
        for name in ("go.mod", "go.sum"):
            shutil.copy(_module() / name, source / name)
        run_step(
            "promtool",
            _STEP,
            [go, "build", "-trimpath", "-o", staging / "promtool", _PACKAGE],
            log,
            # -mod=mod: go.mod names the release only; go fills in its requirements here.
            env={"GOTOOLCHAIN": "auto", "CGO_ENABLED": "0", "GOFLAGS": "-mod=mod"},
            cwd=source,
            tick=tick,
        )
        shutil.rmtree(source)


def main() -> int:
    """Build promtool if needed and print its path (progress goes to stderr)."""
    return print_tool_path(provision_promtool)


if __name__ == "__main__":
    sys.exit(main())
