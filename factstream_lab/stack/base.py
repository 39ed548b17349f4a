"""The shape every local service has: ports, an idempotent build, a command, a readiness probe."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from factstream_lab.stack.process import CacheLayout

if TYPE_CHECKING:
    from factstream_lab.stack.progress import Progress

__all__ = ["LOCAL_HOSTS", "LaunchSpec", "LocalService", "Port"]

LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost"})


@dataclass(frozen=True)
class Port:
    """A port a service listens on and the setting that moves it."""

    number: int
    setting: str


@dataclass(frozen=True)
class LaunchSpec:
    """How to start a service process."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)


class LocalService(ABC):
    """One server of the local stack, provisioned into and run from the cache folder."""

    name: str

    def __init__(self, layout: CacheLayout) -> None:
        self.layout = layout

    @property
    def instance(self) -> str:
        """Name of this instance: service and client port, so two instances never share files."""
        return f"{self.name}-{self.ports[0].number}"

    @property
    def log(self) -> Path:
        return self.layout.log(self.instance)

    @property
    def build_log(self) -> Path:
        return self.layout.log(f"{self.name}-build")

    @property
    def pidfile(self) -> Path:
        return self.layout.pidfile(self.instance)

    @property
    @abstractmethod
    def host(self) -> str:
        """The host clients are configured to reach."""

    @property
    def is_local(self) -> bool:
        """False when the settings point clients at a server elsewhere: then we do not run it."""
        return self.host in LOCAL_HOSTS

    @property
    @abstractmethod
    def ports(self) -> list[Port]:
        """Every port the service listens on; the first is the one clients use."""

    @property
    @abstractmethod
    def endpoint(self) -> str:
        """Where clients reach it, for people to read."""

    @abstractmethod
    def provision(self, progress: Progress | None = None) -> None:
        """Download and build what the service needs; a no-op when the cache has it.

        Each step (a download, a build) reports through ``progress`` (default: silently):
        started, heartbeats, cached or done, failed.
        """

    def prepare(self) -> None:  # noqa: B027 - optional hook, most services need nothing
        """Prepare data folders before a start (format storage ...)."""

    @abstractmethod
    def launch(self) -> LaunchSpec:
        """The command that runs the server in the foreground."""

    @abstractmethod
    def ready(self) -> bool:
        """True when the server answers its protocol (not just an open port)."""
