"""Scalar functions: Substrait base name -> native Spark column builder.

Overloads are told apart by the argument types (integer vs decimal division, date arithmetic), never by the
signature string, which producers write differently. Every builder yields native Catalyst expressions.
"""

from __future__ import annotations

import datetime as dt
import functools
import operator
from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..types import cast
from .call import Call, Handler


def _sql(name: str) -> Handler:
    """A Spark SQL function of the same meaning, called by name with the value arguments."""
    return lambda c: F.call_function(name, *c.cols)


def _unary(fn: Callable[[Column], Column]) -> Handler:
    return lambda c: fn(c.arity(1).cols[0])


def _binary(fn: Callable[[Column, Column], Column]) -> Handler:
    def build(c: Call) -> Column:
        a, b = c.arity(2).cols
        return fn(a, b)

    return build


def _variadic(fn: Callable[[Column, Column], Column]) -> Handler:
    def build(c: Call) -> Column:
        if not c.values:
            raise c.unsupported("needs at least one argument")
        return functools.reduce(fn, c.cols)

    return build


def _cast_to_output(fn: Handler) -> Handler:
    """Spark returns a wider type than Substrait declares (sign, ceil, power on integers): cast back."""

    def build(c: Call) -> Column:
        col = fn(c)
        return cast(col, c.output_type) if c.output_type is not None else col

    return build


# --- arithmetic --------------------------------------------------------------------------------------------


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


# --- comparison and boolean --------------------------------------------------------------------------------


def _between(c: Call) -> Column:
    x, lo, hi = c.arity(3).cols
    return (x >= lo) & (x <= hi)


def _is_distinct_from(c: Call) -> Column:
    a, b = c.arity(2).cols
    return ~a.eqNullSafe(b)


def _xor(c: Call) -> Column:
    a, b = c.arity(2).cols
    return (a | b) & ~(a & b)


# --- strings -----------------------------------------------------------------------------------------------


def _like(c: Call) -> Column:
    """SQL LIKE; an explicit escape character is rewritten into Spark's default escape (backslash)."""
    s, pattern, *escape = c.arity(2, 3).values
    if escape and not (escape[0].is_literal and escape[0].value is None):
        esc = escape[0].value if escape[0].is_literal else None
        if not (pattern.is_literal and isinstance(pattern.value, str) and isinstance(esc, str) and len(esc) == 1):
            raise c.unsupported("LIKE with an escape character needs literal pattern and escape")
        return s.col.like(_rewrite_escape(pattern.value, esc))
    if pattern.is_literal and isinstance(pattern.value, str):
        return s.col.like(pattern.value)
    return F.call_function("like", s.col, pattern.col)


def _rewrite_escape(pattern: str, esc: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == esc and i + 1 < len(pattern):
            out.append("\\" + pattern[i + 1])
            i += 2
            continue
        out.append("\\\\" if ch == "\\" else ch)
        i += 1
    return "".join(out)


def _substring(c: Call) -> Column:
    args = c.arity(2, 3).cols
    if len(args) == 2:
        return F.call_function("substring", *args)
    return args[0].substr(args[1], args[2])


def _trim(fn: str) -> Handler:
    def build(c: Call) -> Column:
        args = c.arity(1, 2).cols
        if len(args) == 1:
            return F.call_function(fn, args[0])
        # Spark SQL: TRIM(BOTH chars FROM s) is btrim(s, chars); ltrim/rtrim take the same order.
        return F.call_function({"trim": "btrim"}.get(fn, fn), args[0], args[1])

    return build


def _pad(fn: str) -> Handler:
    def build(c: Call) -> Column:
        args = c.arity(2, 3).cols
        if len(args) == 2:
            args = [*args, F.lit(" ")]
        return F.call_function(fn, *args)

    return build


def _index_in(c: Call) -> Column:
    needle, haystack = c.arity(2).cols
    pos = F.call_function("array_position", haystack, needle)  # F.array_position wants a Python value
    return F.when(pos > 0, pos - 1).cast(T.LongType())


def _concat(c: Call) -> Column:
    mode = c.option("null_handling", ("ACCEPT_NULLS", "IGNORE_NULLS"), "ACCEPT_NULLS")
    if mode == "IGNORE_NULLS":
        return F.concat_ws("", *c.cols)
    return F.concat(*c.cols)


_EXTRACT: dict[str, Callable[[Column], Column]] = {
    "YEAR": F.year,
    "QUARTER": F.quarter,
    "MONTH": F.month,
    "DAY": F.dayofmonth,
    "DAY_OF_YEAR": F.dayofyear,
    "DAY_OF_WEEK": F.dayofweek,
    "WEEK": F.weekofyear,
    "HOUR": F.hour,
    "MINUTE": F.minute,
    "SECOND": F.second,
}


def _extract(c: Call) -> Column:
    if c.enums:
        component = c.enums[0].upper()
        value = c.arity(1).cols[0]
    else:  # date_part('year', x): the component as a string literal (DataFusion)
        part, arg = c.arity(2).values
        if not (part.is_literal and isinstance(part.value, str)):
            raise c.unsupported("date part must be a literal")
        component, value = part.value.upper(), arg.col
    fn = _EXTRACT.get(component)
    if fn is None:
        raise c.unsupported(f"extract component {component}")
    col = fn(value)
    return cast(col, c.output_type) if c.output_type is not None else col


SCALAR: dict[str, Handler] = {
    # arithmetic
    "add": _add,
    "subtract": _subtract,
    "multiply": _checked(operator.mul),
    "divide": _divide,
    "modulus": _modulus,
    "negate": _unary(operator.neg),
    "abs": _unary(F.abs),
    "sign": _cast_to_output(_unary(F.signum)),
    "power": _cast_to_output(_binary(F.pow)),
    "sqrt": _unary(F.sqrt),
    "exp": _unary(F.exp),
    "ln": _unary(F.log),
    "log10": _unary(F.log10),
    "log2": _unary(F.log2),
    "logb": lambda c: F.call_function("log", c.arity(2).cols[1], c.cols[0]),
    "sin": _unary(F.sin),
    "cos": _unary(F.cos),
    "tan": _unary(F.tan),
    "asin": _unary(F.asin),
    "acos": _unary(F.acos),
    "atan": _unary(F.atan),
    "atan2": _binary(F.atan2),
    "factorial": _cast_to_output(_unary(F.factorial)),
    "bitwise_and": _binary(lambda a, b: a.bitwiseAND(b)),
    "bitwise_or": _binary(lambda a, b: a.bitwiseOR(b)),
    "bitwise_xor": _binary(lambda a, b: a.bitwiseXOR(b)),
    "round": _cast_to_output(_round),
    "ceil": _cast_to_output(_unary(F.ceil)),
    "floor": _cast_to_output(_unary(F.floor)),
    "is_nan": _unary(F.isnan),
    "isnan": _unary(F.isnan),
    "is_finite": _is_finite,
    "is_infinite": _is_infinite,
    # comparison
    "equal": _binary(operator.eq),
    "not_equal": _binary(operator.ne),
    "lt": _binary(operator.lt),
    "lte": _binary(operator.le),
    "gt": _binary(operator.gt),
    "gte": _binary(operator.ge),
    "between": _between,
    "is_null": _unary(lambda x: x.isNull()),
    "is_not_null": _unary(lambda x: x.isNotNull()),
    "is_distinct_from": _is_distinct_from,
    "is_not_distinct_from": _binary(lambda a, b: a.eqNullSafe(b)),
    "coalesce": lambda c: F.coalesce(*c.cols),
    "nullif": _sql("nullif"),
    "least": _sql("least"),
    "greatest": _sql("greatest"),
    # boolean (three-valued, as Spark's AND/OR/NOT)
    "and": _variadic(operator.and_),
    "or": _variadic(operator.or_),
    "not": _unary(operator.invert),
    "xor": _xor,
    # strings
    "like": _like,
    "substring": _substring,
    "concat": _concat,
    "concat_ws": _sql("concat_ws"),
    "lower": _unary(F.lower),
    "upper": _unary(F.upper),
    "contains": _binary(lambda s, sub: s.contains(sub)),
    "starts_with": _binary(lambda s, p: s.startswith(p)),
    "ends_with": _binary(lambda s, p: s.endswith(p)),
    "char_length": _cast_to_output(_unary(F.length)),
    "character_length": _cast_to_output(_unary(F.length)),
    "bit_length": _cast_to_output(_unary(F.bit_length)),
    "octet_length": _cast_to_output(_unary(F.octet_length)),
    "trim": _trim("trim"),
    "btrim": _trim("btrim"),
    "ltrim": _trim("ltrim"),
    "rtrim": _trim("rtrim"),
    "lpad": _pad("lpad"),
    "rpad": _pad("rpad"),
    "replace": _sql("replace"),
    "reverse": _unary(F.reverse),
    "repeat": _sql("repeat"),
    "left": _sql("left"),
    "right": _sql("right"),
    "strpos": _cast_to_output(_sql("instr")),
    # set
    "index_in": _index_in,
    # datetime
    "extract": _extract,
    "date_part": _extract,
}
