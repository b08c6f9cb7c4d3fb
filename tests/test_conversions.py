"""The rule for reading a column as the type a plan declares (`consumer/translation/conversions.py`), pair by pair.

Each LOSSY pair names a value the cast changes; each WIDENING pair is checked on Spark below: casting the extreme
values of the data's type keeps them exactly (the rule's claim, against Spark's own cast).
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from pyspark.sql import types as T
from substrait_spark.consumer.translation.conversions import Conversion, conversion

# Each test carries its tier: `unit` (pure Python) or `spark`.

B, S, I, L = T.ByteType(), T.ShortType(), T.IntegerType(), T.LongType()  # noqa: E741
F4, F8 = T.FloatType(), T.DoubleType()
DATE, TS, NTZ = T.DateType(), T.TimestampType(), T.TimestampNTZType()
STR, BOOL = T.StringType(), T.BooleanType()


def dec(p: int, s: int) -> T.DecimalType:
    return T.DecimalType(p, s)


SAME, WIDENING, LOSSY, NONE = Conversion.SAME, Conversion.WIDENING, Conversion.LOSSY, Conversion.NONE

# (data type, plan's declared type, expected, why)
PAIRS = [
    # equal types, integers of any width (kept at the data's width, never cast), strings
    (dec(15, 2), dec(15, 2), SAME, "equal"),
    (L, I, SAME, "integers are not cast: tpchgen's int64 keys stand for the i32 TPC-H plans declare"),
    (I, L, SAME, "integers are not cast"),
    (STR, STR, SAME, "equal"),
    (DATE, DATE, SAME, "equal"),
    # decimals: as many integer digits and as many fraction digits
    (dec(10, 2), dec(5, 2), LOSSY, "1000.00 has 4 integer digits, decimal(5,2) holds 3"),
    (dec(15, 2), dec(19, 0), LOSSY, "Calcite's bare DECIMAL: 0.05 rounds to 0"),
    (dec(15, 2), dec(15, 1), LOSSY, "0.05 has 2 fraction digits"),
    (dec(15, 2), dec(16, 3), WIDENING, "13 integer digits, 2 fraction digits fit 13 and 3"),
    (dec(15, 2), dec(38, 2), WIDENING, "more integer digits"),
    (dec(15, 2), dec(16, 2), WIDENING, "more integer digits"),
    (dec(15, 2), dec(15, 3), LOSSY, "12 integer digits are fewer than 13"),
    # integers and decimals
    (B, dec(3, 0), WIDENING, "-128..127"),
    (B, dec(2, 0), LOSSY, "127 has 3 digits"),
    (S, dec(5, 0), WIDENING, "-32768..32767"),
    (I, dec(10, 0), WIDENING, "2147483647 has 10 digits"),
    (I, dec(9, 0), LOSSY, "2147483647 has 10 digits"),
    (I, dec(12, 2), WIDENING, "10 integer digits"),
    (I, dec(11, 2), LOSSY, "9 integer digits"),
    (L, dec(19, 0), WIDENING, "9223372036854775807 has 19 digits"),
    (L, dec(18, 0), LOSSY, "19 digits"),
    (dec(9, 0), I, WIDENING, "999999999 fits an int"),
    (dec(10, 0), I, LOSSY, "9999999999 does not fit an int"),
    (dec(18, 0), L, WIDENING, "18 digits fit a long"),
    (dec(19, 0), L, LOSSY, "9999999999999999999 does not fit a long"),
    (dec(2, 0), B, WIDENING, "99 fits a byte"),
    (dec(3, 0), B, LOSSY, "999 does not fit a byte"),
    (dec(5, 1), L, LOSSY, "0.5 has a fraction"),
    # floating point
    (F4, F8, WIDENING, "every float is a double"),
    (F8, F4, LOSSY, "0.1 as a double is not a float"),
    (F8, dec(38, 10), LOSSY, "1e300 and 0.1 as binary fractions"),
    (F4, dec(38, 18), LOSSY, "float -> decimal"),
    (dec(5, 2), F8, LOSSY, "0.01 is not a binary fraction"),
    (dec(15, 0), F8, WIDENING, "integers below 2**53 are exact doubles"),
    (dec(16, 0), F8, LOSSY, "9999999999999999 > 2**53"),
    (dec(7, 0), F4, WIDENING, "9999999 < 2**24"),
    (dec(8, 0), F4, LOSSY, "99999999 > 2**24"),
    (B, F4, WIDENING, "small integers are exact floats"),
    (S, F4, WIDENING, "32767 < 2**24"),
    (I, F4, LOSSY, "2147483647 > 2**24"),
    (I, F8, WIDENING, "2147483647 < 2**53"),
    (L, F8, LOSSY, "int64 -> float64: 2**53 + 1"),
    (F8, L, LOSSY, "0.5 -> 0"),
    (F4, I, LOSSY, "float -> int"),
    # dates and timestamps
    (DATE, TS, WIDENING, "a date is its midnight"),
    (DATE, NTZ, WIDENING, "a date is its midnight"),
    (TS, DATE, LOSSY, "timestamp -> date drops the time"),
    (NTZ, DATE, LOSSY, "timestamp -> date drops the time"),
    (TS, NTZ, LOSSY, "an instant as a wall clock depends on the session time zone"),
    (NTZ, TS, LOSSY, "a wall clock as an instant depends on the session time zone"),
    # no cast gives the declared type
    (STR, I, NONE, "a string for a number"),
    (I, STR, NONE, "a number for a string"),
    (BOOL, I, NONE, "a boolean for a number"),
    (DATE, STR, NONE, "a date for a string"),
    (dec(5, 2), DATE, NONE, "a number for a date"),
]


@pytest.mark.unit
@pytest.mark.parametrize(("actual", "declared", "expected", "why"), PAIRS, ids=[p[3] for p in PAIRS])
def test_conversion(actual, declared, expected, why):
    assert conversion(actual, declared) is expected, why


# The extreme values of each type, one with every fraction digit, and the first integers floats cannot hold.
def _extremes(t: T.DataType) -> list:
    if isinstance(t, T.DecimalType):
        top = Decimal(10**t.precision - 1).scaleb(-t.scale)
        return [top, -top, Decimal(1).scaleb(-t.scale)]
    bits = {T.ByteType: 8, T.ShortType: 16, T.IntegerType: 32, T.LongType: 64}
    for kind, b in bits.items():
        if isinstance(t, kind):
            return [2 ** (b - 1) - 1, -(2 ** (b - 1)), *(2**m + 1 for m in (24, 53) if m < b - 1)]
    if isinstance(t, T.FloatType):
        return [3.4028234663852886e38, 1.401298464324817e-45, 0.1]
    if isinstance(t, T.DoubleType):
        return [1.7976931348623157e308, 5e-324, 0.1]
    raise AssertionError(t)


def _numeric(t: T.DataType) -> bool:
    return isinstance(t, T.NumericType)


def _round_trips(spark, pairs: list[tuple[T.DataType, T.DataType]]) -> list[bool]:
    """For each pair: whether every extreme value of the data type survives Spark's cast to the declared type
    and back, unchanged and not NULL (one query for all pairs)."""
    from pyspark.sql import functions as F

    cols = []
    for i, (actual, declared) in enumerate(pairs):
        checks = []
        for v in _extremes(actual):
            src = F.lit(str(v)).cast(actual)
            back = src.cast(declared).cast(actual)
            checks.append(F.coalesce(back == src, F.lit(False)))
        cols.append(F.array(*checks).alias(f"p{i}"))
    row = spark.range(1).select(*cols).first()
    return [all(row[f"p{i}"]) for i in range(len(pairs))]


_NUMERIC = [(a, d, e, why) for a, d, e, why in PAIRS if _numeric(a) and _numeric(d)]


@pytest.mark.spark
def test_spark_keeps_every_widened_value_and_changes_a_lossy_one(spark):
    """Spark's own cast agrees with the rule: a WIDENING pair keeps the data type's extreme values (and one with
    every fraction digit) through the cast and back; a LOSSY pair changes or loses at least one of them.
    Decimal -> double pairs are the exception Spark hides: its double -> decimal cast reads the double's
    shortest decimal form, so 0.01 comes back although the double is not 0.01 (sums of such doubles differ)."""
    kept = _round_trips(spark, [(a, d) for a, d, _, _ in _NUMERIC])
    for (a, d, e, why), k in zip(_NUMERIC, kept, strict=True):
        if e is WIDENING:
            assert k, f"{a.simpleString()} -> {d.simpleString()} changed a value: {why}"
        elif e is LOSSY and not (isinstance(a, T.DecimalType) and isinstance(d, T.FractionalType)):
            assert not k, f"{a.simpleString()} -> {d.simpleString()} kept every value: {why}"
