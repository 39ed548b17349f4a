"""`factstream api`: serve the HTTP API with uvicorn, refusing unsafe configurations."""

from __future__ import annotations

import logging

import uvicorn

from factstream.access import load_key_table
from factstream.api.app import create_app
from factstream.config import ApiSettings, Settings

__all__ = ["LOOPBACK", "check_serving", "run_api"]

LOOPBACK = "127.0.0.1"
log = logging.getLogger(__name__)


def check_serving(api: ApiSettings) -> str:
    """What the server will say at start; raises ValueError for a configuration it refuses.

    No-auth mode is only served on 127.0.0.1; with auth, at least one key must be configured.
    """
    if api.no_auth:
        if api.host != LOOPBACK:
            raise ValueError(
                f"FACTSTREAM_API_NO_AUTH is only allowed with FACTSTREAM_API_HOST={LOOPBACK}, "
                f"not {api.host}"
            )
        return (
            f"NO-AUTH MODE: every request may read and publish every namespace; "
            f"listening on {LOOPBACK}:{api.port} only"
        )
    keys = load_key_table(api)
    if not keys.grants:
        raise ValueError(
            "no API keys configured: set FACTSTREAM_API_KEYS (or FACTSTREAM_API_KEYS_FILE); "
            "`factstream api hash-key KEY` prints a key's hash. For local use only, "
            "FACTSTREAM_API_NO_AUTH=true serves without keys on 127.0.0.1"
        )
    return f"{len(keys.grants)} API key(s) configured; listening on {api.host}:{api.port}"


def run_api(settings: Settings, log_level: str = "info") -> None:
    """Serve until stopped (SIGTERM, Ctrl-C)."""
    uvicorn.run(
        create_app(settings),
        host=settings.api.host,
        port=settings.api.port,
        log_level=log_level,
        # A last guard against connection floods, well above the requests admitted at once
        # (over that, Admission answers 429; over this, uvicorn answers 503).
        limit_concurrency=8 * settings.api.max_in_flight,
        # A stream never ends by itself (the console's live feed): on stop, 5 s, then closed.
        timeout_graceful_shutdown=5,
    )
