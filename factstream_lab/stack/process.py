"""Process plumbing: build steps, detached servers, pid files, stopping children, ports."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from factstream.errors import BuildStepFailed, ServiceStartFailed, ToolMissing

__all__ = [
    "CacheLayout",
    "free_port",
    "free_ports",
    "log_tail",
    "port_is_free",
    "process_alive",
    "require_tool",
    "read_pid",
    "run_step",
    "staged_folder",
    "start_detached",
    "stop_children",
    "stop_process",
    "wait_until",
]

TAIL_LINES = 20  # how much of a log a failure shows
_TAIL_BYTES = 64 * 1024
_TICK_S = 0.5
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")  # colours and cursor moves (mvn prints some)


@dataclass(frozen=True)
class CacheLayout:
    """Where the local stack keeps things: builds below ``root``; data, logs and pid files
    below ``state``, by default ``root`` too (a second instance of a server, for a fault
    test, runs from the same builds with a state folder of its own)."""

    root: Path
    state: Path | None = None

    @property
    def logs(self) -> Path:
        return (self.state or self.root) / "logs"

    @property
    def run(self) -> Path:
        return (self.state or self.root) / "run"

    @property
    def data(self) -> Path:
        return (self.state or self.root) / "data"

    def log(self, name: str) -> Path:
        self.logs.mkdir(parents=True, exist_ok=True)
        return self.logs / f"{name}.log"

    def pidfile(self, name: str) -> Path:
        self.run.mkdir(parents=True, exist_ok=True)
        return self.run / f"{name}.pid"


@contextlib.contextmanager
def staged_folder(folder: Path) -> Iterator[Path]:
    """A fresh ``<folder>.partial`` to fill; it replaces ``folder`` when the block ends
    without error, so a cache folder is complete or absent, never half-written."""
    staging = folder.with_name(f"{folder.name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    yield staging
    shutil.rmtree(folder, ignore_errors=True)
    staging.rename(folder)


def require_tool(service: str, tool: str, hint: str) -> str:
    """Return the absolute path of ``tool`` or raise ToolMissing."""
    path = shutil.which(tool)
    if path is None:
        raise ToolMissing(service, tool, hint)
    return path


def log_tail(log: Path, lines: int = TAIL_LINES) -> str:
    """The last ``lines`` non-blank lines of ``log``, terminal escapes removed (empty if no log)."""
    try:
        with log.open("rb") as file:
            file.seek(max(0, file.seek(0, os.SEEK_END) - _TAIL_BYTES))
            text = _ESCAPES.sub("", file.read().decode(errors="replace"))
    except OSError:
        return ""
    return "\n".join([line for line in text.splitlines() if line.strip()][-lines:])


def run_step(
    service: str,
    step: str,
    cmd: Sequence[str | Path],
    log: Path,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    tick: Callable[[], None] | None = None,
) -> None:
    """Run one provisioning step, appending its output to ``log``.

    Args:
        tick: Called about every half second while the step runs (progress heartbeats).

    Raises:
        BuildStepFailed: it exited non-zero; the error carries the log's last lines.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        out.write(f"\n### {service}: {step}\n$ {' '.join(map(str, cmd))}\n".encode())
        out.flush()
        proc = subprocess.Popen(  # noqa: S603 - fixed argv built by us
            [str(c) for c in cmd],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            cwd=cwd,
        )
        returncode = _wait_ticking(proc, tick)
    if returncode != 0:
        raise BuildStepFailed(service, step, returncode, log, log_tail(log))


def _wait_ticking(proc: subprocess.Popen[bytes], tick: Callable[[], None] | None) -> int:
    try:
        while True:
            try:
                return proc.wait(timeout=_TICK_S)
            except subprocess.TimeoutExpired:
                if tick is not None:
                    tick()
    except BaseException:  # Ctrl-C, or a failing tick: leave no compiler running
        proc.kill()
        proc.wait()
        raise


def start_detached(
    cmd: Sequence[str | Path], log: Path, pidfile: Path, *, env: Mapping[str, str] | None = None
) -> int:
    """Start a server in its own session (it outlives this process); record its pid."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        out.write(f"\n### start {time.strftime('%Y-%m-%dT%H:%M:%S')}\n".encode())
    argv = [str(c) for c in cmd]
    # posix_spawn rather than Popen: no Popen object whose finaliser warns while the server runs.
    pid = os.posix_spawnp(
        argv[0],
        argv,
        {**os.environ, **(env or {})},
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, str(log), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644),
            (os.POSIX_SPAWN_DUP2, 1, 2),
            *((os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited_fds()),
        ],
        setsid=True,
    )
    pidfile.write_text(str(pid))
    return pid


def _inherited_fds() -> list[int]:
    """Descriptors above stderr that a child would inherit: a server outliving us must not
    keep them open (`flock LOCK factstream services up` would leave the lock held by it)."""
    fds = []
    for name in os.listdir("/proc/self/fd") if os.path.isdir("/proc/self/fd") else []:
        fd = int(name)
        with contextlib.suppress(OSError):  # the listing's own descriptor is gone by now
            if fd > 2 and os.get_inheritable(fd):
                fds.append(fd)
    return fds


def read_pid(pidfile: Path) -> int | None:
    """The pid recorded in ``pidfile`` if that process still runs."""
    try:
        pid = int(pidfile.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    return pid if process_alive(pid) else None


def process_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state == "Z":
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
            return False
    return True


def stop_process(pid: int, *, grace_s: float = 30.0) -> None:
    """SIGTERM the process group of ``pid``, then SIGKILL it after ``grace_s``."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, sig)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if not process_alive(pid):
                return
            time.sleep(0.2)


def stop_children(children: Iterable[subprocess.Popen[Any]], *, grace_s: float = 30.0) -> None:
    """SIGTERM every child still running, wait up to ``grace_s`` for them all, SIGKILL the rest.

    Every child signalled is waited for, so none is left behind as a zombie.
    """
    running = [proc for proc in children if proc.poll() is None]
    for proc in running:
        proc.terminate()
    deadline = time.monotonic() + grace_s
    for proc in running:
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    return free_ports(1)[0]


def free_ports(count: int, *, pair_last: bool = False) -> list[int]:
    """``count`` distinct free ports on 127.0.0.1 (held together while chosen, so none repeats).

    Args:
        count: How many.
        pair_last: The last port's successor is free too (checked, not returned).
    """
    held: list[socket.socket] = []
    try:
        while len(held) < count:
            sock = socket.socket()
            held.append(sock)
            sock.bind(("127.0.0.1", 0))
            if pair_last and len(held) == count:
                with socket.socket() as nxt:
                    try:
                        nxt.bind(("127.0.0.1", sock.getsockname()[1] + 1))
                    except OSError:
                        held.pop().close()
        return [int(s.getsockname()[1]) for s in held]
    finally:
        for sock in held:
            sock.close()


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """True if nothing listens on ``host:port`` (we could bind it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.connect((host, port))
        except OSError:
            return True
    return False


def wait_until(
    service: str,
    ready: Callable[[], bool],
    *,
    pid: int,
    log: Path,
    timeout_s: float,
    interval_s: float = 0.5,
    tick: Callable[[], None] | None = None,
) -> None:
    """Poll ``ready`` until it is true; fail early if ``pid`` exits.

    Args:
        tick: Called after each poll (progress heartbeats).

    Raises:
        ServiceStartFailed: the process exited, or was not ready in time; the error carries
            the log's last lines.
    """
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ready():
            return
        if not process_alive(pid):
            reason = "the process exited during start-up"
            raise ServiceStartFailed(service, reason, log, log_tail(log))
        if tick is not None:
            tick()
        time.sleep(interval_s)
    raise ServiceStartFailed(service, f"not ready after {timeout_s:.0f}s", log, log_tail(log))
