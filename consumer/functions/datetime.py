"""Date and time functions (functions_datetime.yaml).

Substrait `precision_timestamp` is Spark's TIMESTAMP_NTZ (a wall-clock time) and `precision_timestamp_tz` is
Spark's TIMESTAMP (an instant). Functions on instants that name a time zone are computed without the session
time zone: the instant's offset from the epoch is an exact interval, and wall-clock times in a named zone come
from `from_utc_timestamp`/`to_utc_timestamp`, which take the zone as an argument.
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..types import cast, family
from .arithmetic import ARITHMETIC
from .build import binary, cast_to_output
from .call import Call, Handler

_NTZ_EPOCH = "1970-01-01 00:00:00"


def _unix_seconds(x: Column, kind: str) -> Column:
    """Seconds since 1970-01-01 00:00:00 UTC (a wall-clock time counts as UTC; floor for earlier times)."""
    if kind == "date":
        return F.unix_date(x).cast(T.LongType()) * F.lit(86400)
    if kind == "timestamp_tz":
        return F.unix_seconds(x)
    days = F.unix_date(F.to_date(x)).cast(T.LongType())
    return days * F.lit(86400) + F.hour(x) * F.lit(3600) + F.minute(x) * F.lit(60) + F.second(x)


def _seconds(x: Column) -> Column:
    """Seconds with their fraction (decimal(8,6)): exact."""
    return F.call_function("date_part", F.lit("SECOND"), x)


def _monday_day_of_week(x: Column) -> Column:
    return (F.dayofweek(x) + F.lit(5)) % F.lit(7) + F.lit(1)


# Components whose value depends on the indexing option (ONE: the natural numbering, ZERO: one less).
_INDEXED: dict[str, Callable[[Column], Column]] = {
    "QUARTER": F.quarter,
    "MONTH": F.month,
    "DAY": F.dayofmonth,
    "DAY_OF_YEAR": F.dayofyear,
    "SUNDAY_DAY_OF_WEEK": F.dayofweek,  # Spark: Sunday = 1 ... Saturday = 7
    "MONDAY_DAY_OF_WEEK": _monday_day_of_week,
    "ISO_WEEK": F.weekofyear,  # Spark's week of year is ISO 8601
    # DataFusion/older plans: plain names
    "WEEK": F.weekofyear,
    "DAY_OF_WEEK": F.dayofweek,
}
_PLAIN: dict[str, Callable[[Column], Column]] = {
    "YEAR": F.year,
    "ISO_YEAR": lambda x: F.call_function("date_part", F.lit("YEAROFWEEK"), x),
    "HOUR": F.hour,
    "MINUTE": F.minute,
    "SECOND": F.second,
    # Seconds and fraction in the unit, as Calcite's, PostgreSQL's and DuckDB's EXTRACT (and the spec's tests).
    "MILLISECOND": lambda x: F.floor(_seconds(x) * F.lit(1000)),
    "MICROSECOND": lambda x: (_seconds(x) * F.lit(1_000_000)).cast(T.LongType()),
    "SUBSECOND": lambda x: (_seconds(x) * F.lit(1_000_000)).cast(T.LongType()) % F.lit(1_000_000),
}


def _component(c: Call, component: str, x: Column, kind: str, indexing: str | None) -> Column:
    if component == "UNIX_TIME":
        return _unix_seconds(x, kind)
    if component in _PLAIN:
        if indexing is not None:
            raise c.unsupported(f"indexing option given for {component}")
        return _PLAIN[component](x)
    fn = _INDEXED.get(component)
    if fn is None:
        raise c.unsupported(f"extract component {component}")
    col = fn(x)
    return col - F.lit(1) if indexing == "ZERO" else col


def _kind(t: T.DataType) -> str:
    if isinstance(t, T.TimestampType):
        return "timestamp_tz"
    return "date" if isinstance(t, T.DateType) else family(t)


def _extract(c: Call) -> Column:
    if c.enums:
        component = c.enums[0].upper()
        indexing = c.enums[1].upper() if len(c.enums) > 1 else None
        if indexing not in (None, "ONE", "ZERO"):
            raise c.unsupported(f"indexing {indexing}")
        value, *tz = c.arity(1, 2).values
        x = value.col
        kind = _kind(value.type)
        if tz:
            x, kind = _wall_clock(value.col, tz[0].col), "timestamp"
    else:  # date_part('year', x): the component as a string literal (DataFusion)
        part, value = c.arity(2).values
        if not (part.is_literal and isinstance(part.value, str)):
            raise c.unsupported("date part must be a literal")
        component, indexing, x, kind = part.value.upper(), None, value.col, _kind(value.type)
    col = _component(c, component, x, kind, indexing)
    return cast(col, c.output_type or T.LongType())


def _instant_offset(x: Column) -> Column:
    """An instant's exact distance from the epoch, as a day-time interval (session-independent)."""
    return x - F.timestamp_seconds(F.lit(0))


def _wall_clock(x: Column, tz: Column) -> Column:
    """The wall-clock time (TIMESTAMP_NTZ) of instant `x` in zone `tz`."""
    return F.lit(_NTZ_EPOCH).cast(T.TimestampNTZType()) + _instant_offset(F.from_utc_timestamp(x, tz))


def _local_timestamp(c: Call) -> Column:
    x, tz = c.arity(2).cols
    return _wall_clock(x, tz)


def _assume_timezone(c: Call) -> Column:
    """The instant at which zone `tz`'s clocks show wall-clock time `x` (a date: its midnight)."""
    x, tz, *_precision = c.arity(2, 3).values
    ntz = x.col.cast(T.TimestampNTZType())
    as_utc = F.timestamp_seconds(F.lit(0)) + (ntz - F.lit(_NTZ_EPOCH).cast(T.TimestampNTZType()))
    return F.to_utc_timestamp(as_utc, tz.col)


def _datetime_arithmetic(name: str) -> Handler:
    """date +/- interval_day is a timestamp in functions_datetime (unless the plan declares a date, as
    producers of SQL's `date - INTERVAL '3' DAY` do); everything else is the arithmetic table's add/subtract."""
    general = ARITHMETIC[name]

    def build(c: Call) -> Column:
        fams = c.families()
        if fams[:2] == ("date", "interval_day") and not isinstance(c.output_type, T.DateType):
            a, b = c.arity(2).cols
            ts = a.cast(T.TimestampNTZType())
            return ts + b if name == "add" else ts - b
        return general(c)

    return build


DATETIME: dict[str, Handler] = {
    "extract": _extract,
    "date_part": _extract,
    "functions_datetime/add": _datetime_arithmetic("add"),
    "functions_datetime/subtract": _datetime_arithmetic("subtract"),
    "add_intervals": cast_to_output(binary(lambda a, b: a + b)),  # whole-day literals are INTERVAL DAY
    "local_timestamp": _local_timestamp,
    "assume_timezone": _assume_timezone,
}
