"""Valid time: intervals when facts held, and the time expressions that name them."""

from factstream.temporal.facts import (
    MAX_VALID_AFTER_EVENT,
    check_interval,
    resolve_fact_interval,
    resolve_time_expression,
    says_past,
    told_time,
)
from factstream.temporal.intervals import ValidInterval
from factstream.temporal.parse import TimeKind, TimeReference, find_times, parse_time, strip_time

__all__ = [
    "MAX_VALID_AFTER_EVENT",
    "TimeKind",
    "TimeReference",
    "ValidInterval",
    "check_interval",
    "find_times",
    "parse_time",
    "resolve_fact_interval",
    "resolve_time_expression",
    "says_past",
    "strip_time",
    "told_time",
]
