"""factstream: keep a language model's external knowledge current as the world changes."""

from factstream.config import Settings, load_settings
from factstream.errors import FactstreamError

__all__ = ["FactstreamError", "Settings", "__version__", "load_settings"]

__version__ = "0.1.0"
