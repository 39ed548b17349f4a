"""Embeddings: an Embedder Protocol, the sentence-transformers adapter, a hashing test double."""

from factstream.embed.base import Embedder, Vector

__all__ = ["Embedder", "Vector"]
