"""The wire contract: topic declarations, records and JSON Schemas (docs/design.md section 2)."""
