"""Conformance cases whose outcome differs by configuration (tests/spark_modes.py), with the reason.

Cases listed here fail in that configuration on top of expected_failures.txt (which holds the classic 3.5 run's
failures, and applies to every configuration): the conformance pass count differs exactly by these.
"""

from __future__ import annotations

_YEAR_MONTH_COLLECT = (
    "the client cannot collect a year-month interval value (this case's result is a NULL interval year): pyspark "
    "4.x raises NOT_IMPLEMENTED on classic ('YearMonthIntervalType.fromInternal is not implemented') and on "
    "Connect ('Collecting a year-month interval value in Spark Connect is not implemented'); pyspark 3.5's Connect "
    "client fails in its Arrow conversion (KeyError 21). Spark computes the value; Python cannot receive it"
)

EXTRA_FAILURES: dict[str, dict[str, str]] = {
    "classic-3": {},
    "classic-4": {"datetime/add_intervals.test:10": _YEAR_MONTH_COLLECT},
    "connect-3": {"datetime/add_intervals.test:10": _YEAR_MONTH_COLLECT},
    "connect-4": {"datetime/add_intervals.test:10": _YEAR_MONTH_COLLECT},
}
