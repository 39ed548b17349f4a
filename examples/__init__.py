"""Programs that use factstream the way a downstream team would (docs/consuming.md)."""
