"""The HTTP API (docs/design.md section 6): ask, facts, documents, health, readiness, metrics."""

from __future__ import annotations

from factstream.api.app import create_app

__all__ = ["create_app"]
