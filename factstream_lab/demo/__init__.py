"""The demo: CLARK-News documents through the real stack, its story, and the mirror's check."""
