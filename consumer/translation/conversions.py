"""When a table's column may stand for the type a plan declares for it, and at what cost.

A plan produced against another schema declares types its data does not have (Calcite's bare `DECIMAL` is
`decimal(19,0)`; TPC-H prices are `decimal(15,2)`). Casting the data to the declared type is right only when no
value can change: a lossy cast (fewer digits, float <-> decimal, timestamp -> date, ...) silently turns values into
NULLs or rounds them, so it is a schema mismatch unless the caller asks for it (`cast_to_plan_types`).

The rule, once, for every read (`relations/read.py`): `conversion(actual, declared)`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..types import cast, compatible, family
from .relation import quote


class Conversion(enum.Enum):
    """What reading a column of one type as another takes."""

    SAME = "same"  # the column stands for the declared type as it is (no cast; see `types.compatible`)
    WIDENING = "widening"  # a cast that keeps every value
    LOSSY = "lossy"  # a cast that can change values: a schema mismatch unless the caller opts in
    NONE = "none"  # no cast gives the declared type (a string for a number)


# Exact numbers as (integer digits, fraction digits): the digits every value of the type needs ...
_INT_DIGITS_NEEDED: dict[type[T.DataType], int] = {T.ByteType: 3, T.ShortType: 5, T.IntegerType: 10, T.LongType: 19}
# ... and the digits of a number that fit in the type, whatever they are (127 fits a byte, 999 does not).
_INT_DIGITS_HELD = {T.ByteType: 2, T.ShortType: 4, T.IntegerType: 9, T.LongType: 18}
# Binary floating point: significand bits (every integer up to 2**bits is exact).
_SIGNIFICAND_BITS: dict[type[T.DataType], int] = {T.FloatType: 24, T.DoubleType: 53}
_DATES = (T.DateType, T.TimestampType, T.TimestampNTZType)


def conversion(actual: T.DataType, declared: T.DataType) -> Conversion:
    """How a column of type `actual` becomes the plan's `declared` type.

    Integers of any width are SAME (kept at the data's width, never cast: see `types.compatible`). A cast is
    WIDENING when every value of `actual` is a value of `declared`: integers and decimals into a decimal or an
    integer with at least as many integer and fraction digits, integers into a float whose significand holds
    them, float -> double, a date into a timestamp. Any other cast between numbers or between dates and
    timestamps is LOSSY (timestamp <-> timestamp_ntz moves wall clocks by the session time zone)."""
    if compatible(actual, declared):
        return Conversion.SAME
    if family(actual) in ("int", "decimal", "float") and family(declared) in ("int", "decimal", "float"):
        return Conversion.WIDENING if _numeric_lossless(actual, declared) else Conversion.LOSSY
    if isinstance(actual, _DATES) and isinstance(declared, _DATES):
        return Conversion.WIDENING if isinstance(actual, T.DateType) else Conversion.LOSSY
    return Conversion.NONE


def needs_cast(actual: T.DataType, declared: T.DataType) -> bool:
    """Data of type `actual` stored as `declared` needs a cast: another type, or an integer of another width
    (`compatible` lets a read keep its width; a column being written takes the declared one)."""
    if not compatible(actual, declared):
        return True
    return family(declared) == "int" and type(actual) is not type(declared)


def exact_cast(col: Column, actual: T.DataType, declared: T.DataType, message: str) -> Column:
    """`col` (of type `actual`) as `declared`, failing the query with `message` for a value the cast would change
    — never a NULL, a wrapped integer or a rounded number in its place. A cast that keeps every value
    (WIDENING, a wider integer) is not checked."""
    casted = cast(col, declared)
    wider_int = family(actual) == family(declared) == "int" and _INT_DIGITS_NEEDED.get(
        type(actual), 99
    ) <= _INT_DIGITS_NEEDED.get(type(declared), 0)
    if wider_int or conversion(actual, declared) is Conversion.WIDENING:
        return casted
    changed = col.isNotNull() & ~casted.eqNullSafe(col)
    return F.when(changed, F.raise_error(F.lit(message))).otherwise(casted)


def exactly_as(df: DataFrame, types: list[T.DataType], what: str) -> DataFrame:
    """`df` with each column of a type other than `types` says cast to it, value by value exactly (`exact_cast`):
    what a table created from `df` must hold. `what` names the data in the error of a value that does not fit."""
    fields = df.schema.fields
    if not any(needs_cast(f.dataType, t) for f, t in zip(fields, types, strict=True)):
        return df
    return df.select(
        *[
            exact_cast(
                F.col(quote(f.name)),
                f.dataType,
                t,
                f"{what}: a value of column {f.name!r} ({f.dataType.simpleString()}) does not fit {t.simpleString()}",
            ).alias(f.name)
            if needs_cast(f.dataType, t)
            else F.col(quote(f.name))
            for f, t in zip(fields, types, strict=True)
        ]
    )


def _digits(t: T.DataType, held: bool) -> tuple[int, int] | None:
    """(integer digits, fraction digits) of an exact numeric type; None for floating point."""
    if isinstance(t, T.DecimalType):
        return t.precision - t.scale, t.scale
    table = _INT_DIGITS_HELD if held else _INT_DIGITS_NEEDED
    return next(((d, 0) for kind, d in table.items() if isinstance(t, kind)), None)


def _numeric_lossless(actual: T.DataType, declared: T.DataType) -> bool:
    need, hold = _digits(actual, held=False), _digits(declared, held=True)
    if need is None:  # a float: exact only into a float with as many significand bits
        return hold is None and _SIGNIFICAND_BITS[type(declared)] >= _SIGNIFICAND_BITS[type(actual)]
    if hold is None:  # an exact number into a float: integers only, while the significand holds them
        return need[1] == 0 and 10 ** need[0] - 1 <= 2 ** _SIGNIFICAND_BITS[type(declared)]
    return need[0] <= hold[0] and need[1] <= hold[1]


@dataclass(frozen=True)
class LossyCast:
    """A read column cast to the type the plan declares although the cast can lose information."""

    table: str  # how the read names its source: "table 'lineitem'", "local files '…'", "Iceberg table '…'"
    column: str
    from_type: str
    to_type: str
    path: str

    def note(self) -> str:
        """The run report's note."""
        return (
            f"lossy cast (cast_to_plan_types): {self.table}, column {self.column!r}: "
            f"{self.from_type} -> {self.to_type} (at {self.path})"
        )
