"""Columns with exactly the nullability a plan declares for a table it creates.

Spark's CTAS takes each column's nullability from its query (when the catalog says `use-nullable-query-schema`
is false, as the Iceberg catalogs configured here do): a required (non-nullable) DataFrame column becomes a
required table column. So a column the plan declares REQUIRED is made non-nullable, failing the query with a
message naming it on a NULL (`required`) — never a NULL written, never a row dropped — and a column declared
NULLABLE whose input cannot be NULL is made nullable (`optional`), so the table takes NULLs later.

Native expressions only (no UDF): they work on Spark Connect as on a classic session.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..types import cast
from .relation import quote

NULL_IN_REQUIRED = "NULL in required column"
_END = "(declared REQUIRED)"
# The message `required` fails a query with, as it reaches the client inside Spark's error text.
REQUIRED_NULL_MESSAGE = re.compile(re.escape(NULL_IN_REQUIRED) + r" .*?" + re.escape(_END))


def null_message(column: str, where: str) -> str:
    return f"{NULL_IN_REQUIRED} {column!r} of {where} {_END}"


def required(col: Column, t: T.DataType, message: str) -> Column:
    """`col`, non-nullable: a NULL fails the query with `message`. The value after the error is never reached; it
    is a non-NULL value of the type, so Spark knows the column cannot be NULL."""
    return F.coalesce(col, cast(F.raise_error(F.lit(message)), t), some_value(t))


def optional(col: Column) -> Column:
    """`col`, nullable even where Spark knows it is not NULL: a CASE whose condition Spark cannot evaluate before
    the query runs (the partition id), so the optimizer cannot reduce it to `col`."""
    return F.when(F.spark_partition_id() >= 0, col)


def with_nullability(df: DataFrame, nullable: Sequence[bool], where: str, *, widen: bool = True) -> DataFrame:
    """`df` with each column's nullability as `nullable` says (positionally): REQUIRED ones non-nullable (`required`),
    and with `widen` NULLABLE ones nullable (`optional`). `where` names the table in the error of a NULL."""
    fields = df.schema.fields
    change = [(f.nullable and not n) or (widen and n and not f.nullable) for f, n in zip(fields, nullable, strict=True)]
    if not any(change):
        return df
    return df.select(
        *[
            _as_declared(f, n, where).alias(f.name) if c else F.col(quote(f.name))
            for f, n, c in zip(fields, nullable, change, strict=True)
        ]
    )


def _as_declared(f: T.StructField, nullable: bool, where: str) -> Column:
    col = F.col(quote(f.name))
    return optional(col) if nullable else required(col, f.dataType, null_message(f.name, where))


def some_value(t: T.DataType) -> Column:
    """A non-NULL literal of type `t` (its value never matters; only that Spark knows it is not NULL)."""
    for kind, value in _VALUES.items():
        if isinstance(t, kind):
            return value(t)
    raise TypeError(f"no non-NULL value for type {t.simpleString()}")  # every type a table_schema maps to has one


def _decimal(t: T.DataType) -> Column:
    assert isinstance(t, T.DecimalType)
    # Zero as a SQL literal with the type's scale and at most one integer digit — decimal(max(1, s), s), which every
    # decimal(p, s) holds, so the cast keeps it non-NULL. (A Python Decimal literal gets decimal(10, s) or wider
    # from a Spark Connect client: a cast of that to decimal(2, 2) could overflow, so Spark makes it nullable.)
    zero = "0." + "0" * t.scale if t.scale else "0"
    return cast(F.expr(f"{zero}BD"), t)


def _struct(t: T.DataType) -> Column:
    assert isinstance(t, T.StructType)
    return cast(F.struct(*[some_value(f.dataType).alias(f.name) for f in t.fields]), t)


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_VALUES: dict[type[T.DataType], Callable[[T.DataType], Column]] = {
    T.BooleanType: lambda t: F.lit(False),
    T.ByteType: lambda t: cast(F.lit(0), t),
    T.ShortType: lambda t: cast(F.lit(0), t),
    T.IntegerType: lambda t: cast(F.lit(0), t),
    T.LongType: lambda t: cast(F.lit(0), t),
    T.FloatType: lambda t: cast(F.lit(0.0), t),
    T.DoubleType: lambda t: F.lit(0.0),
    T.DecimalType: _decimal,
    T.StringType: lambda t: F.lit(""),
    T.BinaryType: lambda t: F.lit(bytearray()),
    T.DateType: lambda t: F.lit(dt.date(1970, 1, 1)),
    T.TimestampType: lambda t: F.lit(_EPOCH),
    T.TimestampNTZType: lambda t: cast(F.lit(_EPOCH), t),
    T.DayTimeIntervalType: lambda t: cast(F.lit(dt.timedelta(0)), t),
    T.YearMonthIntervalType: lambda t: cast(F.lit(0), t),
    T.ArrayType: lambda t: cast(F.array(), t),
    T.MapType: lambda t: cast(F.create_map(), t),
    T.StructType: _struct,
}
