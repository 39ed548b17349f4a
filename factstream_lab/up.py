"""`factstream up`: the whole local stack in the foreground, without Docker.

Services (reused when they already run), then the worker, the HTTP API and, when feeds are
configured, the feed poller, each as a child process with its own log. Ctrl-C (or SIGTERM)
stops the children, then the services this command started; a child that dies stops all.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from factstream.config import Settings
from factstream_lab.stack import manager
from factstream_lab.stack.process import stop_children

__all__ = [
    "Part",
    "child_env",
    "console_url",
    "run_up",
    "start_part",
    "start_parts",
    "stop_parts",
    "supervise",
]

_POLL_S = 0.5


@dataclass
class Part:
    """One child process of the stack."""

    name: str
    argv: list[str]
    log: Path
    where: str
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None

    def alive(self) -> bool:
        """Started and not exited."""
        return self.process is not None and self.process.poll() is None


def console_url(settings: Settings) -> str:
    """Where the API serves the web console."""
    return f"http://{settings.api.host}:{settings.api.port}/ui"


def child_env(settings: Settings) -> tuple[dict[str, str], str | None]:
    """Extra environment for the children, and a warning to print if any.

    Without configured API keys the local API runs in no-auth mode, which the API allows
    only on 127.0.0.1: a local stack for one developer, said out loud.
    """
    api = settings.api
    if api.no_auth or api.keys.strip() or api.keys_file is not None:
        return {}, None
    if api.host not in ("127.0.0.1", "localhost"):
        return {}, None  # the API itself will refuse to start, with its reason
    return {"FACTSTREAM_API_NO_AUTH": "true"}, (
        "no API keys configured (FACTSTREAM_API_KEYS): the API runs WITHOUT authentication, "
        "on 127.0.0.1 only"
    )


def _parts(settings: Settings, env: dict[str, str]) -> list[Part]:
    logs = settings.local.cache_dir / "logs"
    me = [sys.executable, "-m", "factstream"]
    api = settings.api
    parts = [
        Part("worker", [*me, "worker"], logs / "worker.log", "consumes factstream.documents"),
        Part(
            "api",
            [*me, "api"],
            logs / "api.log",
            f"http://{api.host}:{api.port} (OpenAPI at /docs)",
            env,
        ),
    ]
    if settings.feeds.file is not None or settings.feeds.list_json.strip():
        parts.append(
            Part("feeds", [*me, "feeds", "run"], logs / "feeds.log", "polls the feed list")
        )
    return parts


def start_part(part: Part) -> Part:
    """Start one child with ``part.env`` over this environment, logging to ``part.log``."""
    part.log.parent.mkdir(parents=True, exist_ok=True)
    with part.log.open("ab") as out:
        part.process = subprocess.Popen(  # noqa: S603 - our own CLI
            part.argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            env={**os.environ, **part.env},
        )
    return part


def start_parts(settings: Settings, env: dict[str, str]) -> list[Part]:
    """Start the children, each logging to its own file in the cache folder."""
    return [start_part(part) for part in _parts(settings, env)]


def stop_parts(parts: list[Part], grace_s: float = 30.0) -> None:
    """SIGTERM every child, wait for it, SIGKILL what outlives the grace period."""
    stop_children([p.process for p in parts if p.process is not None], grace_s=grace_s)


def supervise(parts: list[Part], stopping: Callable[[], bool]) -> Part | None:
    """Wait until asked to stop (None) or until a child exits (that child)."""
    while not stopping():
        for part in parts:
            if part.process is not None and part.process.poll() is not None:
                return part
        time.sleep(_POLL_S)
    return None


def run_up(settings: Settings, say: Callable[[str], None]) -> int:
    """Bring everything up, supervise until Ctrl-C or a child's death, stop; the exit code."""
    rows = manager.up(settings)
    started = [r.name for r in rows if r.state is manager.ServiceState.STARTED]
    for row in rows:
        say(f"{row.name:9} {row.state.value:9} {row.endpoint}  log: {row.log}")
    env, warning = child_env(settings)
    if warning:
        say(f"WARNING: {warning}")
    stop = {"asked": False}

    def ask_stop(signum: int, frame: FrameType | None) -> None:
        stop["asked"] = True

    previous = {s: signal.signal(s, ask_stop) for s in (signal.SIGINT, signal.SIGTERM)}
    parts: list[Part] = []
    died: Part | None = None
    try:
        parts = start_parts(settings, env)
        for part in parts:
            say(
                f"{part.name:9} pid {part.process.pid if part.process else '-':<9} "
                f"{part.where}  log: {part.log}"
            )
        say(f"{'console':9} {'':9} {console_url(settings)}  (the web console)")
        say("factstream is up; Ctrl-C stops it")
        died = supervise(parts, lambda: stop["asked"])
        if died is not None:
            say(
                f"{died.name} exited with {died.process.returncode if died.process else '?'}; "
                f"stopping (see {died.log})"
            )
    finally:
        stop_parts(parts)
        if started:
            manager.down(settings, started)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    say("stopped" + (f" (and the services it started: {', '.join(started)})" if started else ""))
    return 1 if died is not None else 0
