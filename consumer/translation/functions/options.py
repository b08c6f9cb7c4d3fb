"""Function options shared by the numeric tables (arithmetic, decimal, aggregates): `overflow`,
`on_domain_error`, `rounding` of float results, and the run-time error a CASE branch raises."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ...types import INT_RANGE, cast
from .call import Call, Option

OVERFLOW = ("SILENT", "SATURATE", "ERROR")
NAN, INF = float("nan"), float("inf")


OVERFLOW_OPTION = Option("overflow", OVERFLOW, "SILENT")
IEEE_ROUNDING = Option("rounding", ("TIE_TO_EVEN",), "TIE_TO_EVEN")  # Spark's only float rounding
DOMAIN_ERROR = Option("on_domain_error", ("NAN", "NULL", "NONE", "ERROR"), "NAN")

# The options a handler reads for a call whose value arguments have these type families (`types.family`; None
# where `validate` cannot tell an argument's type from the plan).
OptionRule = Callable[[tuple[str | None, ...]], tuple[Option, ...]]


def always(*options: Option) -> OptionRule:
    """A handler that reads `options` whatever its argument types."""
    return lambda families: options


def when(cases: Mapping[tuple[str | None, ...], tuple[Option, ...]], otherwise: tuple[Option, ...] = ()) -> OptionRule:
    """A handler that reads the options of its argument families' case (`otherwise` for any other)."""
    return lambda families: cases.get(families, otherwise)


def fail(c: Call, what: str) -> Column:
    """A run-time error naming the function, the problem and the plan path (for a CASE branch)."""
    return F.raise_error(F.lit(f"{c.ref.name}: {what} (at {c.path})"))


def bounds(t: T.DataType) -> tuple[int, int]:
    return INT_RANGE[type(t)]


def int_output(c: Call) -> T.DataType:
    """The integer type of the result: the plan's declared type, else the widest argument type."""
    if c.output_type is not None and type(c.output_type) in INT_RANGE:
        return c.output_type
    return max((v.type for v in c.values if type(v.type) in INT_RANGE), key=lambda t: INT_RANGE[type(t)][1])


def overflow(c: Call, wrapped: Column, out: T.DataType, above: Column | None, below: Column | None) -> Column:
    """Apply the `overflow` option to an integer result.

    `wrapped` is Spark's own (two's-complement) result; `above`/`below` say when the exact result lies above or
    below the range of `out`. SILENT keeps Spark's value, SATURATE clamps, ERROR raises.
    """
    mode = c.read(OVERFLOW_OPTION)
    result = cast(wrapped, out)
    if mode == "SILENT":
        return result
    lo, hi = bounds(out)
    out_of_range = [(cond, value) for cond, value in ((above, hi), (below, lo)) if cond is not None]
    chain = None
    for cond, value in out_of_range:
        then = fail(c, "integer overflow") if mode == "ERROR" else F.lit(value).cast(out)
        chain = F.when(cond, then) if chain is None else chain.when(cond, then)
    return result if chain is None else chain.otherwise(result)


def ieee(c: Call, col: Column) -> Column:
    """A floating-point result: Spark rounds to nearest, ties to even (the only `rounding` it has); the plan's
    declared type is kept (fp32 stays fp32, Spark's math functions return double)."""
    c.read(IEEE_ROUNDING)
    out = c.output_type
    if out is None and c.values and all(isinstance(v.type, T.FloatType) for v in c.values):
        out = T.FloatType()
    return cast(col, out) if out is not None else col


def domain_value(c: Call) -> Column:
    """The value of a call outside the function's domain, per `on_domain_error` (default NaN, like IEEE 754).

    NONE is read as NULL: the spec's own test cases write it, the YAML says "NULL".
    """
    mode = c.read(DOMAIN_ERROR)
    return {"NAN": F.lit(NAN), "ERROR": fail(c, "argument outside the function's domain")}.get(mode, F.lit(None))
