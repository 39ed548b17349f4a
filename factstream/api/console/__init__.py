"""The web console (``/ui`` of ``factstream api``): pages, fragments, the timeline, assets."""
