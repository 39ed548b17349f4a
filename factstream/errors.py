"""factstream's exception hierarchy; every error we raise derives from FactstreamError.

FactstreamError
└── ServiceError                 the local stack (factstream services)
    ├── ToolMissing              a required program (java, mvn, go, ...) is not installed
    ├── BuildStepFailed          a provisioning step exited non-zero (names step and log)
    ├── PortTaken                a port the service needs is held by another program
    └── ServiceStartFailed       the process died or never became ready (names its log)
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "BuildStepFailed",
    "FactstreamError",
    "PortTaken",
    "ServiceError",
    "ServiceStartFailed",
    "ToolMissing",
]


class FactstreamError(Exception):
    """Root of every factstream error."""


class ServiceError(FactstreamError):
    """A local service could not be provisioned or started."""


class ToolMissing(ServiceError):
    """A program the provisioning needs is not on PATH."""

    def __init__(self, service: str, tool: str, hint: str) -> None:
        super().__init__(f"{service}: '{tool}' is not installed or not on PATH; {hint}")
        self.service, self.tool = service, tool


class BuildStepFailed(ServiceError):
    """A provisioning step (download, build, install) exited non-zero."""

    def __init__(self, service: str, step: str, returncode: int, log: Path) -> None:
        super().__init__(
            f"{service}: step '{step}' failed with exit code {returncode}; its log: {log}"
        )
        self.service, self.step, self.returncode, self.log = service, step, returncode, log


class PortTaken(ServiceError):
    """A port the service must listen on is held by a program that is not that service."""

    def __init__(self, service: str, port: int, setting: str) -> None:
        super().__init__(
            f"{service}: port 127.0.0.1:{port} is taken by another program that is not a "
            f"{service} we can use; stop it or choose another port with {setting}"
        )
        self.service, self.port, self.setting = service, port, setting


class ServiceStartFailed(ServiceError):
    """The service process exited, or did not become ready in time."""

    def __init__(self, service: str, reason: str, log: Path) -> None:
        super().__init__(f"{service}: {reason}; its log: {log}")
        self.service, self.reason, self.log = service, reason, log
