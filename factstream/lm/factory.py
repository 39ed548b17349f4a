"""Build the LM stack from settings: HTTP client, structured-output backend, disk cache."""

from __future__ import annotations

from pathlib import Path

from factstream.config import LMSettings
from factstream.lm.base import LMClient
from factstream.lm.cache import CachingLM, SQLiteLMCache
from factstream.lm.openai_compat import OpenAICompatLM
from factstream.metrics import LMMetrics

__all__ = ["LM_CACHE_FILE", "build_lm", "lm_cache_path"]

LM_CACHE_FILE = "lm-cache.sqlite"


def lm_cache_path(lm: LMSettings, cache_dir: Path) -> Path:
    """FACTSTREAM_LM_CACHE_PATH, else lm-cache.sqlite in the cache folder."""
    return lm.cache_path if lm.cache_path is not None else cache_dir / LM_CACHE_FILE


def build_lm(lm: LMSettings, cache_dir: Path, metrics: LMMetrics) -> LMClient:
    """The LM client for ``lm``, behind the response cache unless FACTSTREAM_LM_CACHE=false.

    Args:
        lm: The LM settings section.
        cache_dir: The cache folder (LocalSettings.cache_dir).
        metrics: LM metrics to record into.
    """
    client = OpenAICompatLM(lm, metrics)
    if not lm.cache:
        return client
    return CachingLM(client, SQLiteLMCache(lm_cache_path(lm, cache_dir)), metrics)
