"""The LM layer: an LMClient Protocol, the OpenAI-compatible adapter, backends, cache, a double."""

from factstream.lm.base import Completion, CompletionRequest, LMClient, Usage

__all__ = ["Completion", "CompletionRequest", "LMClient", "Usage"]
