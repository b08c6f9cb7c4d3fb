"""Decimal overloads (functions_arithmetic_decimal.yaml), keyed `functions_arithmetic_decimal/<name>`.

Spark's decimal result types for + - * / % are the YAML's (precision capped at 38, scale kept >= 6);
what differs is overflow (Spark gives NULL where the option may ask for an error or a clamp), the aggregate
result types (Spark widens sum to p+10 and avg to (p+4, s+4), the YAML declares decimal(38, s)), and the
functions Spark has no decimal form of (bitwise operators, factorial past 20).
"""

from __future__ import annotations

import operator
from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ...types import cast
from .call import Call, Handler
from .options import OVERFLOW_OPTION, Option, OptionRule, always, fail, when

COMPLEX_RESULT = Option("complex_number_result", ("NAN", "ERROR"), "NAN")

AggregateHandler = Callable[[Call, bool], Column]

_MAX_PRECISION = 38
_FACTORIAL_MAX = 33  # 33! < 10**38 <= 34!


def _largest(t: T.DecimalType) -> Column:
    """The largest value of a decimal type, as a literal of that type."""
    digits = "9" * (t.precision - t.scale)
    text = f"{digits or '0'}.{'9' * t.scale}" if t.scale else digits
    return F.lit(text).cast(t.simpleString())


def _result_type(name: str, a: T.DecimalType, b: T.DecimalType) -> T.DecimalType:
    """The YAML's (and Spark's) result type of a binary decimal operation."""
    p1, s1, p2, s2 = a.precision, a.scale, b.precision, b.scale
    if name in ("add", "subtract"):
        scale = max(s1, s2)
        prec = scale + max(p1 - s1, p2 - s2) + 1
    elif name == "multiply":
        scale, prec = s1 + s2, p1 + p2 + 1
    elif name == "divide":
        scale = max(6, s1 + p2 + 1)
        prec = p1 - s1 + s2 + scale
    else:  # modulus
        scale = max(s1, s2)
        prec = min(p1 - s1, p2 - s2) + scale
    if prec > _MAX_PRECISION:
        scale = max(scale - (prec - _MAX_PRECISION), min(scale, 6))
        prec = _MAX_PRECISION
    return T.DecimalType(prec, scale)


def decimal_overflow(c: Call, col: Column, inputs_present: Column, sign: Column, out: T.DecimalType) -> Column:
    """Spark's decimal arithmetic gives NULL when the result does not fit (ANSI mode off). With every input
    present, that NULL is an overflow: SILENT keeps it, ERROR raises, SATURATE clamps toward `sign`."""
    mode = c.read(OVERFLOW_OPTION)
    col = cast(col, out)
    if mode == "SILENT":
        return col
    overflowed = col.isNull() & inputs_present
    if mode == "ERROR":
        return F.when(overflowed, fail(c, "decimal overflow")).otherwise(col)
    largest = _largest(out)
    return F.when(overflowed, F.when(sign < F.lit(0), -largest).otherwise(largest)).otherwise(col)


def _binary(op: Callable[[Column, Column], Column]) -> Handler:
    def build(c: Call) -> Column:
        a, b = c.arity(2).values
        if not (isinstance(a.type, T.DecimalType) and isinstance(b.type, T.DecimalType)):
            return op(a.col, b.col)
        out = c.output_type if isinstance(c.output_type, T.DecimalType) else _result_type(c.name, a.type, b.type)
        sign = op(a.col.cast("double"), b.col.cast("double"))
        return decimal_overflow(c, op(a.col, b.col), a.col.isNotNull() & b.col.isNotNull(), sign, out)

    return build


# Bitwise operators on decimal<P, 0>: as 128-bit two's complement, split in two 64-bit halves
# (x = hi * 2**64 + lo, 0 <= lo < 2**64), each combined with Spark's bigint operator.
def _power_of_two(n: int) -> Column:
    return F.lit(str(2**n)).cast("decimal(20,0)")


def _halves(x: Column) -> tuple[Column, Column]:
    """(hi, lo) as bigints with x = hi * 2**64 + (lo mod 2**64); no intermediate leaves decimal(38, 0)."""
    two64 = _power_of_two(64)
    wide = x.cast("decimal(38,0)")
    q = F.call_function("div", wide, two64)  # truncated toward zero
    r = wide - q.cast("decimal(38,0)") * two64  # |r| < 2**64, the sign of x
    hi = F.when(r < F.lit(0), q - F.lit(1)).otherwise(q)
    lo = F.when(r < F.lit(0), r + two64).otherwise(r)  # 0 <= lo < 2**64
    signed_lo = F.when(lo >= _power_of_two(63), lo - two64).otherwise(lo).cast("bigint")
    return hi, signed_lo


def _join(hi: Column, lo: Column) -> Column:
    """hi * 2**64 + (lo mod 2**64), ordered so that no partial sum passes the result (for results near +-10**38)."""
    two64, lo_wide = _power_of_two(64), lo.cast("decimal(20,0)")
    lo_below = F.when(lo < F.lit(0), lo_wide).otherwise(lo_wide - two64)  # (lo mod 2**64) - 2**64
    lo_above = F.when(lo < F.lit(0), lo_wide + two64).otherwise(lo_wide)  # lo mod 2**64
    wide_hi = hi.cast("decimal(38,0)")
    return F.when(hi < F.lit(0), (wide_hi + F.lit(1)) * two64 + lo_below).otherwise(wide_hi * two64 + lo_above)


def _bitwise(op: Callable[[Column, Column], Column]) -> Handler:
    def build(c: Call) -> Column:
        a, b = c.arity(2).values
        ta, tb = a.type, b.type
        if not (isinstance(ta, T.DecimalType) and isinstance(tb, T.DecimalType) and ta.scale == tb.scale == 0):
            raise c.unsupported("bitwise operators take decimal<P, 0> arguments")
        (ah, al), (bh, bl) = _halves(a.col), _halves(b.col)
        out = c.output_type or T.DecimalType(max(ta.precision, tb.precision), 0)
        return cast(_join(op(ah, bh), op(al, bl)), out)

    return build


def _factorial(c: Call) -> Column:
    """n! for decimal<P, 0> as decimal(38, 0): a native product over sequence(1, n), exact up to 33!; larger or
    negative arguments are an error (the YAML has no option for them)."""
    (x,) = c.arity(1).cols
    n = x.cast("int")
    product = F.aggregate(
        F.sequence(F.lit(1), F.greatest(n, F.lit(1))),
        F.lit(1).cast("decimal(38,0)"),
        lambda acc, k: (acc * k).cast("decimal(38,0)"),
    )
    out = c.output_type or T.DecimalType(38, 0)
    return cast(
        F.when(x.isNull(), F.lit(None))
        .when(x < F.lit(0), fail(c, "factorial of a negative number"))
        .when(x > F.lit(_FACTORIAL_MAX), fail(c, "decimal overflow (n! > 10^38 - 1)"))
        .otherwise(product),
        out,
    )


def _sqrt(c: Call) -> Column:
    """Square root as fp64; a negative decimal is an error (the YAML has no NaN option for it)."""
    (x,) = c.arity(1).cols
    return F.when(x < F.lit(0), fail(c, "square root of a negative number")).otherwise(F.sqrt(x))


def _power(c: Call) -> Column:
    """power as fp64; a complex result (negative base, fractional exponent) per `complex_number_result`."""
    a, b = c.arity(2).cols
    mode = c.read(COMPLEX_RESULT)
    value = F.pow(a, b)
    if mode == "ERROR":
        value = F.when(F.isnan(value), fail(c, "complex number result")).otherwise(value)
    c.read(OVERFLOW_OPTION)  # a double overflows to +-inf, the IEEE 754 result
    return value


def _sum_type(c: Call) -> T.DecimalType:
    (x,) = c.values
    if isinstance(c.output_type, T.DecimalType):
        return c.output_type
    assert isinstance(x.type, T.DecimalType), "the handler is registered for a decimal argument"
    return T.DecimalType(38, x.type.scale)


def _sum(zero_if_empty: bool) -> AggregateHandler:
    """sum/sum0 as decimal(38, s); Spark's NULL for an overflowing sum follows `overflow`."""

    def build(c: Call, distinct: bool) -> Column:
        (x,) = c.arity(1).cols
        total = (F.sum_distinct if distinct else F.sum)(x)
        present = F.count(x) > F.lit(0)
        col = decimal_overflow(c, total, present, F.sum(x.cast("double")), _sum_type(c))
        return F.coalesce(col, F.lit(0).cast(_sum_type(c).simpleString())) if zero_if_empty else col

    return build


def _avg(c: Call, distinct: bool) -> Column:
    """avg as decimal(38, s) (Spark: decimal(p+4, s+4)), rounded half up to the declared scale."""
    (x,) = c.arity(1).cols
    c.read(OVERFLOW_OPTION)  # the mean of decimal(p, s) values always fits decimal(38, s)
    out = c.output_type if c.output_type is not None and not isinstance(c.output_type, T.DecimalType) else None
    src = x.cast("double") if out is not None else x  # a declared fp64 result: averaged in double
    mean = F.sum_distinct(src) / F.count_distinct(src) if distinct else F.avg(src)
    return cast(mean, out or _sum_type(c))


_STEM = "functions_arithmetic_decimal"

DECIMAL: dict[str, Handler] = {
    f"{_STEM}/add": _binary(operator.add),
    f"{_STEM}/subtract": _binary(operator.sub),
    f"{_STEM}/multiply": _binary(operator.mul),
    f"{_STEM}/divide": _binary(operator.truediv),
    f"{_STEM}/modulus": _binary(operator.mod),
    f"{_STEM}/bitwise_and": _bitwise(lambda a, b: a.bitwiseAND(b)),
    f"{_STEM}/bitwise_or": _bitwise(lambda a, b: a.bitwiseOR(b)),
    f"{_STEM}/bitwise_xor": _bitwise(lambda a, b: a.bitwiseXOR(b)),
    f"{_STEM}/factorial": _factorial,
    f"{_STEM}/sqrt": _sqrt,
    f"{_STEM}/power": _power,
}

_DECIMALS = when({("decimal", "decimal"): (OVERFLOW_OPTION,)})
# The options each handler above reads (what `validate` checks; keys as DECIMAL's and DECIMAL_AGGREGATE's).
DECIMAL_OPTIONS: dict[str, OptionRule] = {
    **{f"{_STEM}/{name}": _DECIMALS for name in ("add", "subtract", "multiply", "divide", "modulus")},
    f"{_STEM}/power": always(COMPLEX_RESULT, OVERFLOW_OPTION),
}
DECIMAL_AGGREGATE_OPTIONS: dict[str, OptionRule] = {
    f"{_STEM}/{name}": always(OVERFLOW_OPTION) for name in ("sum", "sum0", "avg")
}

DECIMAL_AGGREGATE: dict[str, AggregateHandler] = {
    f"{_STEM}/sum": _sum(zero_if_empty=False),
    f"{_STEM}/sum0": _sum(zero_if_empty=True),
    f"{_STEM}/avg": _avg,
}
