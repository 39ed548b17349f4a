"""The wire contract: topic declarations, record models and JSON Schemas (design.md section 2)."""
