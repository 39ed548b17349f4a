"""`factstream eval locomo`: LoCoMo conversations, evidence recall and time resolved."""
