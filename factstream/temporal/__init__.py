"""Valid time: intervals when facts held, and the time expressions that name them."""

from factstream.temporal.intervals import ValidInterval

__all__ = ["ValidInterval"]
