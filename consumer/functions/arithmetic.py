"""Arithmetic, rounding and logarithmic functions (functions_arithmetic*.yaml, rounding, logarithmic)."""

from __future__ import annotations

import datetime as dt
import operator
from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..types import cast
from .build import binary, cast_to_output, unary
from .call import Call, Handler


def _whole_days(arg) -> int | None:
    if arg.is_literal and isinstance(arg.value, dt.timedelta):
        td = arg.value
        if td.seconds == 0 and td.microseconds == 0:
            return td.days
    return None


def _date_shift(c: Call, sign: int) -> Column | None:
    """date +/- literal interval stays a date, like Spark SQL's `date - INTERVAL '90' DAY`."""
    (fa, fb), (a, b) = c.families(), c.values
    if sign > 0 and fa.startswith("interval") and fb == "date":
        a, b, fa, fb = b, a, fb, fa
    if fa != "date":
        return None
    if fb == "interval_day" and (days := _whole_days(b)) is not None:
        return F.date_add(a.col, sign * days)
    if fb == "interval_year" and b.is_literal:
        return F.add_months(a.col, sign * int(b.value))
    return None


_INT_BITS = {T.ByteType: 7, T.ShortType: 15, T.IntegerType: 31, T.LongType: 63}


def _checked(op: Callable[[Column, Column], Column]) -> Handler:
    """Integer add/subtract/multiply with the plan's `overflow` option.

    SILENT (the default) is Spark's own two's-complement wrap-around; ERROR and SATURATE compare the
    exact result (computed as a decimal, which holds any product of two 64-bit integers) with the bounds
    of the result type.
    """

    def build(c: Call) -> Column:
        a, b = c.arity(2).values
        col = op(a.col, b.col)
        mode = c.option("overflow", ("SILENT", "SATURATE", "ERROR"), "SILENT")
        if mode == "SILENT" or c.families() != ("int", "int"):
            return col
        out = c.output_type if isinstance(c.output_type, tuple(_INT_BITS)) else None
        if out is None:
            out = max((a.type, b.type), key=lambda t: _INT_BITS[type(t)])
        bits = _INT_BITS[type(out)]
        lo, hi = -(2**bits), 2**bits - 1
        wide = T.DecimalType(20, 0)
        exact = op(a.col.cast(wide), b.col.cast(wide))
        if mode == "ERROR":
            message = F.lit(f"{c.ref.name}: integer overflow (at {c.path})")
            return F.when((exact < F.lit(lo)) | (exact > F.lit(hi)), F.raise_error(message)).otherwise(col.cast(out))
        return (
            F.when(exact > F.lit(hi), F.lit(hi).cast(out))
            .when(exact < F.lit(lo), F.lit(lo).cast(out))
            .otherwise(col.cast(out))
        )

    return build


_add_checked = _checked(operator.add)
_subtract_checked = _checked(operator.sub)


def _add(c: Call) -> Column:
    c.arity(2)
    shifted = _date_shift(c, 1)
    return shifted if shifted is not None else _add_checked(c)


def _subtract(c: Call) -> Column:
    c.arity(2)
    shifted = _date_shift(c, -1)
    return shifted if shifted is not None else _subtract_checked(c)


def _divide(c: Call) -> Column:
    a, b = c.arity(2).values
    if c.families() == ("int", "int"):
        # Substrait integer division truncates toward zero and stays integral, like Spark's `div`.
        col = F.call_function("div", a.col, b.col)
        return cast(col, c.output_type) if c.output_type is not None else col
    return a.col / b.col


def _modulus(c: Call) -> Column:
    a, b = c.arity(2).cols
    return a % b


def _round(c: Call) -> Column:
    mode = c.option("rounding", ("TIE_AWAY_FROM_ZERO", "TIE_TO_EVEN"), "TIE_AWAY_FROM_ZERO")
    fn = "bround" if mode == "TIE_TO_EVEN" else "round"
    return F.call_function(fn, *c.cols)


def _is_finite(c: Call) -> Column:
    x = c.arity(1).cols[0]
    return ~F.isnan(x) & (F.abs(x) != F.lit(float("inf")))


def _is_infinite(c: Call) -> Column:
    x = c.arity(1).cols[0]
    return F.abs(x) == F.lit(float("inf"))


ARITHMETIC: dict[str, Handler] = {
    "add": _add,
    "subtract": _subtract,
    "multiply": _checked(operator.mul),
    "divide": _divide,
    "modulus": _modulus,
    "negate": unary(operator.neg),
    "abs": unary(F.abs),
    "sign": cast_to_output(unary(F.signum)),
    "power": cast_to_output(binary(F.pow)),
    "sqrt": unary(F.sqrt),
    "exp": unary(F.exp),
    "ln": unary(F.log),
    "log10": unary(F.log10),
    "log2": unary(F.log2),
    "logb": lambda c: F.call_function("log", c.arity(2).cols[1], c.cols[0]),
    "sin": unary(F.sin),
    "cos": unary(F.cos),
    "tan": unary(F.tan),
    "asin": unary(F.asin),
    "acos": unary(F.acos),
    "atan": unary(F.atan),
    "atan2": binary(F.atan2),
    "factorial": cast_to_output(unary(F.factorial)),
    "bitwise_and": binary(lambda a, b: a.bitwiseAND(b)),
    "bitwise_or": binary(lambda a, b: a.bitwiseOR(b)),
    "bitwise_xor": binary(lambda a, b: a.bitwiseXOR(b)),
    "round": cast_to_output(_round),
    "ceil": cast_to_output(unary(F.ceil)),
    "floor": cast_to_output(unary(F.floor)),
    "is_nan": unary(F.isnan),
    "isnan": unary(F.isnan),
    "is_finite": _is_finite,
    "is_infinite": _is_infinite,
}
