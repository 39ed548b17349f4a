"""Text helpers every floor may use: names and aliases in plain text (no LM, no services)."""
