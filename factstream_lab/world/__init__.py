"""Generated worlds (docs/design.md section 12): a seeded Markov chain over people,
organisations and places, rendered as timestamped conversation chunks, with triples and
questions in the CLARK-News file format (docs/world.md)."""
