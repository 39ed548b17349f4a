"""Namespace placement: the map every publisher applies, and its planner (issue 25)."""
