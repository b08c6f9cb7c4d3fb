"""Arithmetic, rounding and logarithmic functions (functions_arithmetic.yaml, functions_rounding.yaml,
functions_logarithmic.yaml); the decimal overloads are in decimal.py.

Spark's defaults differ from Substrait's: integer overflow wraps, `x / 0` and `log(0)` give NULL, float math
returns double. Every option the YAML declares is mapped explicitly; ERROR raises at run time through
`raise_error` inside a CASE, so the expression stays native and Catalyst still optimises it.
"""

from __future__ import annotations

import datetime as dt
import operator
from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ...types import cast
from .build import binary, cast_to_output, unary
from .call import Call, Handler
from .decimal import DECIMAL, DECIMAL_OPTIONS
from .options import (
    DOMAIN_ERROR,
    IEEE_ROUNDING,
    OVERFLOW_OPTION,
    Option,
    OptionRule,
    always,
    bounds,
    domain_value,
    fail,
    ieee,
    int_output,
    overflow,
    when,
)
from .options import INF as _INF
from .options import NAN as _NAN

INT_DIVISION_BY_ZERO = Option("on_division_by_zero", ("NULL", "NAN", "ERROR"), "NULL")
FLOAT_DIVISION_BY_ZERO = Option("on_division_by_zero", ("IEEE", "LIMIT", "NULL", "ERROR"), "IEEE")
DIVISION_TYPE = Option("division_type", ("TRUNCATE", "FLOOR"), "TRUNCATE")
MODULUS_BY_ZERO = Option("on_domain_error", ("NULL", "ERROR"), "NULL")
LOG_ZERO = Option("on_log_zero", ("NAN", "ERROR", "MINUS_INFINITY"), "MINUS_INFINITY")
ROUNDING = Option("rounding", ("TIE_AWAY_FROM_ZERO", "TIE_TO_EVEN"), "TIE_AWAY_FROM_ZERO")


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


_EXACT = T.DecimalType(38, 0)  # holds any sum, difference or product of two 64-bit integers


def _checked(op: Callable[[Column, Column], Column]) -> Handler:
    """add/subtract/multiply: integers honour `overflow` (the exact result is computed as a decimal and compared
    with the bounds of the result type); floats follow IEEE 754."""

    def build(c: Call) -> Column:
        a, b = c.arity(2).values
        fams = c.families()
        if fams == ("float", "float"):
            return ieee(c, op(a.col, b.col))
        if fams != ("int", "int"):
            return op(a.col, b.col)
        out = int_output(c)
        exact = op(cast(a.col, _EXACT), cast(b.col, _EXACT))
        lo, hi = bounds(out)
        wrapped = op(cast(a.col, out), cast(b.col, out))  # Spark computes in the declared width
        return overflow(c, wrapped, out, exact > F.lit(hi), exact < F.lit(lo))

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


def _int_divide(c: Call) -> Column:
    """Truncating integer division. Divisor 0 per `on_division_by_zero` (NULL, ERROR; NAN reads as NULL: an
    integer has no NaN); MIN / -1 per `overflow`."""
    a, b = (v.col for v in c.values)
    out = int_output(c)
    lo, _ = bounds(out)
    by_zero = c.read(INT_DIVISION_BY_ZERO)
    zero = fail(c, "division by zero") if by_zero == "ERROR" else F.lit(None).cast(out)
    quotient = overflow(c, F.call_function("div", a, b), out, (a == F.lit(lo)) & (b == F.lit(-1)), None)
    return F.when(b == F.lit(0), zero).otherwise(quotient)


def _negative_zero(x: Column) -> Column:
    """Whether a float zero is -0.0 (atan2 tells the sign of a zero; `=` does not)."""
    return F.atan2(x, F.lit(-1.0)) < F.lit(0.0)


def _float_divide(c: Call) -> Column:
    """Float division. A plan stating neither `on_division_by_zero` nor `on_domain_error` leaves both to the
    consumer (spec: "free to choose any supported behavior"): Spark's own `/`, the division Spark SQL plans — a
    zero divisor gives NULL (on_division_by_zero NULL; the engine holds ANSI off), inf/inf NaN (on_domain_error
    NAN). A stated preference is honoured: x/±0 is ±inf (IEEE), the largest finite value (LIMIT), NULL or an
    error; 0/0 and inf/inf per `on_domain_error`."""
    a, b = (v.col for v in c.values)
    if not (c.prefers(FLOAT_DIVISION_BY_ZERO) or c.prefers(DOMAIN_ERROR)):
        return ieee(c, a / b)
    by_zero = c.read(FLOAT_DIVISION_BY_ZERO)
    fp32 = isinstance(c.output_type, T.FloatType) or all(isinstance(v.type, T.FloatType) for v in c.values)
    limit = 3.4028234663852886e38 if fp32 else 1.7976931348623157e308
    negative = (a < F.lit(0.0)) != _negative_zero(b)
    magnitude = F.lit(_INF if by_zero == "IEEE" else limit)
    zero_value = {
        "NULL": F.lit(None),
        "ERROR": fail(c, "division by zero"),
    }.get(by_zero, F.when(negative, -magnitude).otherwise(magnitude))
    # Spark's `/` is IEEE's but for a zero divisor (NaN propagates): only that and inf/inf need a branch, each
    # guarded by the divisor, so a literal divisor (`x / 7.0`) folds to Spark SQL's own `x / 7.0`.
    by_zero_value = F.when(F.isnan(a), F.lit(_NAN)).when(a == F.lit(0.0), domain_value(c)).otherwise(zero_value)
    both_inf = (F.abs(b) == F.lit(_INF)) & (F.abs(a) == F.lit(_INF))
    col = F.when(b == F.lit(0.0), by_zero_value).when(both_inf, domain_value(c)).otherwise(a / b)
    return ieee(c, col)


def _divide(c: Call) -> Column:
    a, b = c.arity(2).values
    fams = c.families()
    if fams == ("int", "int"):
        # ibis declares divide:i32_i32 -> fp64: still integer division (the function), in the declared type
        declared = c.output_type
        return cast(_int_divide(c), declared) if isinstance(declared, T.FractionalType) else _int_divide(c)
    if fams == ("float", "float"):
        return _float_divide(c)
    return a.col / b.col


def _modulus(c: Call) -> Column:
    """Remainder with `division_type` TRUNCATE (sign of the dividend, Spark's `%`) or FLOOR (sign of the divisor);
    divisor 0 per `on_domain_error` (NULL, ERROR). MIN % -1 is 0: `overflow` cannot happen."""
    a, b = c.arity(2).cols
    if c.families() != ("int", "int"):
        return a % b
    out = int_output(c)
    c.read(OVERFLOW_OPTION)
    kind = c.read(DIVISION_TYPE)
    zero = c.read(MODULUS_BY_ZERO)
    r = a % b
    if kind == "FLOOR":
        r = F.when((r != F.lit(0)) & ((r < F.lit(0)) != (b < F.lit(0))), r + b).otherwise(r)
    zero_value = fail(c, "modulus by zero") if zero == "ERROR" else F.lit(None)
    return F.when(b == F.lit(0), zero_value).otherwise(cast(r, out))


def _negate_decimal(x: Column, dt: T.DecimalType) -> Column:
    """`0 - x`, not `-x`: Spark 4's decimal negation rounds through 34 significant digits, so it fails on the
    38-digit values the spec says negate exactly (the range of decimal<P, S> is symmetric)."""
    return cast(cast(F.lit(0), dt) - x, dt)


def _abs_or_negate(
    fn: Callable[[Column], Column], decimal: Callable[[Column, T.DecimalType], Column] | None = None
) -> Handler:
    """abs/negate: only MIN of an integer type overflows (its positive counterpart is one past MAX)."""

    def build(c: Call) -> Column:
        (x,) = c.arity(1).values
        if c.families() == ("float",):
            return ieee(c, fn(x.col))
        if decimal is not None and isinstance(x.type, T.DecimalType):
            return decimal(x.col, x.type)
        if c.families() != ("int",):
            return fn(x.col)
        out = int_output(c)
        lo, _ = bounds(out)
        return overflow(c, fn(cast(x.col, out)), out, x.col == F.lit(lo), None)

    return build


def _factorial(c: Call) -> Column:
    """Spark's factorial is exact for 0..20 and NULL beyond (or below): past the result type is overflow."""
    (x,) = c.arity(1).cols
    out = int_output(c)
    _, hi = bounds(out)
    value = F.factorial(x)
    too_big = x.isNotNull() & (x >= F.lit(0)) & (value.isNull() | (value > F.lit(hi)))
    return overflow(c, value, out, too_big, None)


def _power(c: Call) -> Column:
    """Integer power through Spark's double `pow`, cast back to the integer type; the double result tells
    overflow. Floats stay IEEE 754."""
    a, b = c.arity(2).cols
    value = F.pow(a, b)
    if c.families() != ("int", "int"):
        return ieee(c, value)
    out = int_output(c)
    lo, hi = bounds(out)
    return overflow(c, value, out, value > F.lit(float(hi)), value < F.lit(float(lo)))


def _float_fn(fn: Callable[[Column], Column], outside: Callable[[Column], Column] | None = None) -> Handler:
    """A floating-point function of one argument; `outside` marks arguments outside its domain (per
    `on_domain_error`). Spark's math functions return double: fp32 stays fp32."""

    def build(c: Call) -> Column:
        (x,) = c.arity(1).cols
        col = fn(x)
        if outside is not None:
            col = F.when(outside(x), domain_value(c)).otherwise(col)
        return ieee(c, col)

    return build


def _atan2(c: Call) -> Column:
    y, x = c.arity(2).cols
    c.read(DOMAIN_ERROR)  # atan2 is defined everywhere
    return ieee(c, F.atan2(y, x))


def _log_guard(c: Call, x: Column, col: Column, base: Column | None = None) -> Column:
    """Spark's logarithms give NULL for x <= 0. Zero follows `on_log_zero` (default -inf, IEEE 754), negative
    arguments (and a base <= 0) follow `on_domain_error` (default NaN)."""
    mode = c.read(LOG_ZERO)
    zero = {"NAN": F.lit(_NAN), "ERROR": fail(c, "logarithm of zero")}.get(mode, F.lit(-_INF))
    outside = x < F.lit(0)
    if base is not None:
        outside = outside | (base <= F.lit(0))
    return ieee(c, F.when(outside, domain_value(c)).when(x == F.lit(0), zero).otherwise(col))


def _log(fn: Callable[[Column], Column]) -> Handler:
    def build(c: Call) -> Column:
        (x,) = c.arity(1).cols
        return _log_guard(c, x, fn(x))

    return build


def _logb(c: Call) -> Column:
    """logb(x, base) = log_base(x): the YAML's argument order, value first (Spark's `log` takes the base first)."""
    x, base = c.arity(2).cols
    return _log_guard(c, x, F.call_function("log", base, x), base)


def _round(c: Call) -> Column:
    mode = c.read(ROUNDING)
    fn = "bround" if mode == "TIE_TO_EVEN" else "round"
    return F.call_function(fn, *c.cols)


def _is_finite(c: Call) -> Column:
    x = c.arity(1).cols[0]
    return ~F.isnan(x) & (F.abs(x) != F.lit(_INF))


def _is_infinite(c: Call) -> Column:
    x = c.arity(1).cols[0]
    return F.abs(x) == F.lit(_INF)


# Bits of the integer types Spark shifts only after widening them to int.
_NARROW_BITS: dict[type[T.DataType], int] = {T.ByteType: 8, T.ShortType: 16}


def _shift(name: str) -> Handler:
    """shift_left/right(_unsigned)(x, n): Spark's shifts keep int and bigint as they are, and (as Java) take the
    amount modulo their width. An i8 or i16 base (DataFusion's `>>` on GROUPING()'s i8 grouping id) is shifted as
    an int with the amount modulo its own width, as DataFusion shifts it (`producers.FUNCTION_ALIASES`), and the
    result is in the base's type (the spec's shifts return their base's type) unless the plan declares one."""

    def build(c: Call) -> Column:
        x, n = c.arity(2).values
        base, amount = cast(x.col, x.type), n.col  # the declared width decides
        bits = _NARROW_BITS.get(type(x.type))
        if bits is not None:
            amount = amount.bitwiseAND(F.lit(bits - 1))
            if name == "shiftrightunsigned":  # the vacant bits of the narrow type are zeros, not its sign
                base = base.cast("int").bitwiseAND(F.lit((1 << bits) - 1))
        return cast(F.call_function(name, base, amount), c.output_type or x.type)

    return build


def _bitwise_not(c: Call) -> Column:
    (x,) = c.arity(1).cols
    return cast(F.bitwise_not(x), int_output(c))


def _out_of(lo: float | None = None, hi: float | None = None, abs_gt: float | None = None):
    def outside(x: Column) -> Column:
        conds = []
        if lo is not None:
            conds.append(x < F.lit(lo))
        if hi is not None:
            conds.append(x > F.lit(hi))
        if abs_gt is not None:
            conds.append(F.abs(x) > F.lit(abs_gt))
        out = conds[0]
        for cond in conds[1:]:
            out = out | cond
        return out

    return outside


ARITHMETIC: dict[str, Handler] = {
    "add": _add,
    "subtract": _subtract,
    "multiply": _checked(operator.mul),
    "divide": _divide,
    "modulus": _modulus,
    "negate": _abs_or_negate(operator.neg, _negate_decimal),
    "abs": _abs_or_negate(F.abs),
    "sign": cast_to_output(unary(F.signum)),
    "power": _power,
    "sqrt": _float_fn(F.sqrt, _out_of(lo=0.0)),
    "exp": _float_fn(F.exp),
    "ln": _log(F.log),
    "log10": _log(F.log10),
    "log2": _log(F.log2),
    "logb": _logb,
    "log1p": lambda c: _log_guard(c, c.arity(1).cols[0] + F.lit(1.0), F.log1p(c.cols[0])),
    "sin": _float_fn(F.sin),
    "cos": _float_fn(F.cos),
    "tan": _float_fn(F.tan),
    "sinh": _float_fn(F.sinh),
    "cosh": _float_fn(F.cosh),
    "tanh": _float_fn(F.tanh),
    "asin": _float_fn(F.asin, _out_of(abs_gt=1.0)),
    "acos": _float_fn(F.acos, _out_of(abs_gt=1.0)),
    "atan": _float_fn(F.atan),
    "asinh": _float_fn(F.asinh),
    "acosh": _float_fn(F.acosh, _out_of(lo=1.0)),
    "atanh": _float_fn(F.atanh, _out_of(abs_gt=1.0)),
    "atan2": _atan2,
    "radians": _float_fn(F.radians),
    "degrees": _float_fn(F.degrees),
    "factorial": _factorial,
    "bitwise_not": _bitwise_not,
    "bitwise_and": cast_to_output(binary(lambda a, b: a.bitwiseAND(b))),
    "bitwise_or": cast_to_output(binary(lambda a, b: a.bitwiseOR(b))),
    "bitwise_xor": cast_to_output(binary(lambda a, b: a.bitwiseXOR(b))),
    "shift_left": _shift("shiftleft"),
    "shift_right": _shift("shiftright"),
    "shift_right_unsigned": _shift("shiftrightunsigned"),
    "round": cast_to_output(_round),
    "ceil": cast_to_output(unary(F.ceil)),
    "floor": cast_to_output(unary(F.floor)),
    "is_finite": _is_finite,
    "is_infinite": _is_infinite,
    **DECIMAL,
}


# The options each handler above reads, by argument families (what `validate` checks; keys as ARITHMETIC's).
_CHECKED = when({("float", "float"): (IEEE_ROUNDING,), ("int", "int"): (OVERFLOW_OPTION,)})
_FLOAT = always(IEEE_ROUNDING)
_FLOAT_DOMAIN = always(DOMAIN_ERROR, IEEE_ROUNDING)
_LOG = always(LOG_ZERO, DOMAIN_ERROR, IEEE_ROUNDING)
_SIGNED = when({("float",): (IEEE_ROUNDING,), ("int",): (OVERFLOW_OPTION,)})
ARITHMETIC_OPTIONS: dict[str, OptionRule] = {
    "add": _CHECKED,
    "subtract": _CHECKED,
    "multiply": _CHECKED,
    "divide": when(
        {
            ("int", "int"): (INT_DIVISION_BY_ZERO, OVERFLOW_OPTION),
            ("float", "float"): (FLOAT_DIVISION_BY_ZERO, DOMAIN_ERROR, IEEE_ROUNDING),
        }
    ),
    "modulus": when({("int", "int"): (OVERFLOW_OPTION, DIVISION_TYPE, MODULUS_BY_ZERO)}),
    "negate": _SIGNED,
    "abs": _SIGNED,
    "power": when({("int", "int"): (OVERFLOW_OPTION,)}, otherwise=(IEEE_ROUNDING,)),
    **dict.fromkeys(("sqrt", "asin", "acos", "acosh", "atanh"), _FLOAT_DOMAIN),
    **dict.fromkeys(
        ("exp", "sin", "cos", "tan", "sinh", "cosh", "tanh", "atan", "asinh", "radians", "degrees"), _FLOAT
    ),
    **dict.fromkeys(("ln", "log10", "log2", "logb", "log1p"), _LOG),
    "atan2": _FLOAT_DOMAIN,
    "factorial": always(OVERFLOW_OPTION),
    "round": always(ROUNDING),
    **DECIMAL_OPTIONS,
}
