"""unsigned_integers.yaml: arithmetic on u8/u16/u32/u64, held in the smallest signed Spark type that fits them.

A u8 is a smallint, u16 an int, u32 a bigint, u64 a decimal(20,0) (`types.USER_DEFINED`), so Spark's own
overflow never fires: every result is computed exactly as a wide decimal and brought back into the unsigned
range by the plan's `overflow` option — SILENT wraps modulo 2^bits, SATURATE clamps to 0 / 2^bits-1,
ERROR fails the query. Keyed `unsigned_integers/<name>`, so they take precedence for this extension only.
"""

from __future__ import annotations

import decimal
import operator
from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ...types import USER_DEFINED, cast
from .call import Call, Handler, Option
from .options import OVERFLOW_OPTION, OptionRule, always

# Holds any sum, difference or product of two u32 and any sum of u64 values; a u64 product that does not fit
# comes back NULL from Spark (non-ANSI decimal overflow) and counts as an overflow.
_WIDE = T.DecimalType(38, 0)
_SPARK_BITS: dict[str, int] = {USER_DEFINED[f"unsigned_integers/u{b}"].spark.simpleString(): b for b in (8, 16, 32, 64)}
# Unsigned operands within range have no domain errors: `on_domain_error` is read (and refused) only.
DOMAIN_ERROR = Option("on_domain_error", ("NULL", "ERROR"), "NULL")
DIVISION_BY_ZERO = Option("on_division_by_zero", ("NULL", "ERROR"), "NULL")


def _bits(c: Call, dt: T.DataType | None) -> int:
    """The width of the unsigned type a Spark type holds here (the call's declared output type first)."""
    bits = _SPARK_BITS.get(dt.simpleString()) if dt is not None else None
    if bits is None:
        raise c.unsupported(f"argument of Spark type {dt.simpleString() if dt else '?'} is not an unsigned integer")
    return bits


def _spark(bits: int) -> T.DataType:
    return USER_DEFINED[f"unsigned_integers/u{bits}"].spark


def _big(n: int) -> Column:
    """An integer constant of any size (above 2^63 a decimal)."""
    return F.lit(decimal.Decimal(n)).cast(_WIDE) if n >= 2**63 else F.lit(n)


def _into_range(c: Call, exact: Column, overflowed: Column, bits: int, mode: str) -> Column:
    """An exact result (NULL when it did not fit the wide decimal) brought into u<bits> by the overflow mode."""
    out, hi = _spark(bits), 2**bits - 1
    over = overflowed | (exact > _big(hi)) | (exact < F.lit(0))
    if mode == "ERROR":
        message = F.lit(f"{c.ref.name}: unsigned integer overflow of u{bits} (at {c.path})")
        return F.when(over, F.raise_error(message)).otherwise(cast(exact, out))
    if mode == "SATURATE":
        top = cast(_big(hi), out)
        return F.when(exact < F.lit(0), cast(F.lit(0), out)).when(over, top).otherwise(cast(exact, out))
    return cast(F.pmod(exact, _big(2**bits)), out)


def _arithmetic(op: Callable[[Column, Column], Column]) -> Handler:
    def build(c: Call) -> Column:
        a, b = c.arity(2).values
        bits = _bits(c, c.output_type or a.type)
        exact = op(a.col.cast(_WIDE), b.col.cast(_WIDE))
        overflowed = exact.isNull() & a.col.isNotNull() & b.col.isNotNull()
        return _into_range(c, exact, overflowed, bits, c.read(OVERFLOW_OPTION))

    return build


def _divide(c: Call) -> Column:
    """Truncating division; by zero gives NULL or an error (`on_division_by_zero`). Unsigned operands within
    range have no domain errors, so `on_domain_error` changes nothing."""
    a, b = c.arity(2).values
    bits = _bits(c, c.output_type or a.type)
    c.read(DOMAIN_ERROR)
    by_zero = c.read(DIVISION_BY_ZERO)
    x, y = a.col.cast(_WIDE), b.col.cast(_WIDE)
    quotient = cast((x - x % y) / y, _spark(bits))  # exact: x - x % y is a multiple of y
    message = F.lit(f"{c.ref.name}: division by zero (at {c.path})")
    zero = F.raise_error(message) if by_zero == "ERROR" else F.lit(None)
    return F.when(b.col == F.lit(0), zero).otherwise(quotient)


def _sum(c: Call, distinct: bool) -> Column:
    """The u64 sum (NULL for no rows), computed exactly and brought into range by `overflow`."""
    (x,) = c.arity(1).cols
    _bits(c, c.values[0].type)
    wide = x.cast(_WIDE)
    total = F.sum_distinct(wide) if distinct else F.sum(wide)
    overflowed = total.isNull() & (F.count(x) > F.lit(0))
    return _into_range(c, total, overflowed, 64, c.read(OVERFLOW_OPTION))


def _extreme(fn: Callable[[Column], Column]) -> Callable[[Call, bool], Column]:
    """min/max: the signed Spark type orders the unsigned values correctly; DISTINCT changes nothing."""

    def build(c: Call, distinct: bool) -> Column:
        (x,) = c.arity(1).cols
        _bits(c, c.values[0].type)
        return fn(x)

    return build


UNSIGNED_SCALAR: dict[str, Handler] = {
    "unsigned_integers/add": _arithmetic(operator.add),
    "unsigned_integers/subtract": _arithmetic(operator.sub),
    "unsigned_integers/multiply": _arithmetic(operator.mul),
    "unsigned_integers/divide": _divide,
}

UNSIGNED_AGGREGATE: dict[str, Callable[[Call, bool], Column]] = {
    "unsigned_integers/sum": _sum,
    "unsigned_integers/min": _extreme(F.min),
    "unsigned_integers/max": _extreme(F.max),
}

# The options each handler above reads (what `validate` checks; keys as the tables').
UNSIGNED_SCALAR_OPTIONS: dict[str, OptionRule] = {
    **{f"unsigned_integers/{name}": always(OVERFLOW_OPTION) for name in ("add", "subtract", "multiply")},
    "unsigned_integers/divide": always(DOMAIN_ERROR, DIVISION_BY_ZERO),
}
UNSIGNED_AGGREGATE_OPTIONS: dict[str, OptionRule] = {"unsigned_integers/sum": always(OVERFLOW_OPTION)}
