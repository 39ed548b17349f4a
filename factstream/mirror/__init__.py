"""The reference sink: the changelog mirrored into PostgreSQL exactly once (docs/consuming.md).

``schema.py`` (the tables), ``store.py`` (one round of batches, dead letters and offsets in
one transaction), ``runner.py`` (the loop that reads the changelog in rounds),
``commands.py`` (``factstream mirror postgres``).
"""
