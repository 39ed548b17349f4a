"""Locate the local-stack assets of deploy/local (Kafka pom, logging config)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["assets_dir"]


def assets_dir() -> Path:
    """deploy/local: packaged into wheels as factstream_lab/stack/assets, else the source tree."""
    packaged = Path(__file__).parent / "assets"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "deploy" / "local"
