"""Substrait types <-> Spark SQL types, in one place.

Spark has no unsigned, time-of-day, UUID or fixed-length types: fixedchar/varchar read as string,
fixedbinary as binary, uuid as a 16-byte binary; time and user-defined types are rejected.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import types as T
from substrait import type_pb2 as tp

from .errors import PlanInvalidError, UnsupportedFeatureError
from .walk import columns_of

# Spark timestamps are microseconds; precision above 6 cannot be represented.
_MAX_TS_PRECISION = 6

_SIMPLE: dict[str, T.DataType] = {
    "bool": T.BooleanType(),
    "i8": T.ByteType(),
    "i16": T.ShortType(),
    "i32": T.IntegerType(),
    "i64": T.LongType(),
    "fp32": T.FloatType(),
    "fp64": T.DoubleType(),
    "string": T.StringType(),
    "varchar": T.StringType(),
    "fixed_char": T.StringType(),
    "binary": T.BinaryType(),
    "fixed_binary": T.BinaryType(),
    "uuid": T.BinaryType(),
    "date": T.DateType(),
    "timestamp": T.TimestampNTZType(),
    "timestamp_tz": T.TimestampType(),
    "interval_year": T.YearMonthIntervalType(),
    "interval_day": T.DayTimeIntervalType(),
}


def spark_type(t: tp.Type, path: str = "type") -> T.DataType:
    """Map a Substrait type to the Spark type that holds its values exactly."""
    kind = t.WhichOneof("kind")
    if kind is None:
        raise PlanInvalidError("type has no kind set", path)
    if kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind == "decimal":
        precision = t.decimal.precision or 38
        if precision > 38:
            raise UnsupportedFeatureError(f"decimal precision {precision} exceeds Spark's maximum 38", path)
        return T.DecimalType(precision, t.decimal.scale)
    if kind in ("precision_timestamp", "precision_timestamp_tz"):
        precision = getattr(t, kind).precision
        if precision > _MAX_TS_PRECISION:
            raise UnsupportedFeatureError(
                f"{kind} with precision {precision}: Spark timestamps hold at most microseconds", path
            )
        return T.TimestampNTZType() if kind == "precision_timestamp" else T.TimestampType()
    if kind == "struct":
        return T.StructType(
            [
                T.StructField(f"f{i}", spark_type(ft, f"{path}.struct.types[{i}]"), nullable(ft))
                for i, ft in enumerate(t.struct.types)
            ]
        )
    if kind == "list":
        el = t.list.type
        return T.ArrayType(spark_type(el, f"{path}.list.type"), nullable(el))
    if kind == "map":
        return T.MapType(
            spark_type(t.map.key, f"{path}.map.key"),
            spark_type(t.map.value, f"{path}.map.value"),
            nullable(t.map.value),
        )
    if kind == "interval_compound":
        raise UnsupportedFeatureError("interval_compound type: Spark has no year-to-second interval", path)
    raise UnsupportedFeatureError(f"type {kind} has no Spark equivalent", path)


def nullable(t: tp.Type) -> bool:
    """Substrait nullability of a type (unspecified counts as nullable)."""
    kind = t.WhichOneof("kind")
    if kind is None:
        return True
    n = getattr(getattr(t, kind), "nullability", tp.Type.NULLABILITY_UNSPECIFIED)
    return n != tp.Type.NULLABILITY_REQUIRED


def schema_of(named: tp.NamedStruct, path: str = "base_schema") -> tuple[list[str], list[T.DataType]]:
    """Top-level column names and Spark types of a NamedStruct (nested names are skipped over)."""
    columns = columns_of(named, path)
    return [n for n, _ in columns], [spark_type(t, f"{path}.struct.types[{k}]") for k, (_, t) in enumerate(columns)]


def cast(col: Column, dt: T.DataType) -> Column:
    """`col.cast(dt)` naming the type as text: one JVM call instead of three (the object form goes as JSON).

    Struct types keep the object form: their field names come from plans and are not quoted in text form.
    """
    if has_struct(dt):
        return col.cast(dt)
    return col.cast(dt.simpleString())


def has_struct(dt: T.DataType) -> bool:
    """Whether a type is or contains a struct."""
    if isinstance(dt, T.StructType):
        return True
    if isinstance(dt, T.ArrayType):
        return has_struct(dt.elementType)
    if isinstance(dt, T.MapType):
        return has_struct(dt.keyType) or has_struct(dt.valueType)
    return False


# Coarse classes of Spark types, used to choose function overloads; first match wins.
_FAMILIES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    ((T.ByteType, T.ShortType, T.IntegerType, T.LongType), "int"),
    ((T.FloatType, T.DoubleType), "float"),
    (T.DecimalType, "decimal"),
    (T.StringType, "string"),
    (T.BooleanType, "bool"),
    (T.DateType, "date"),
    ((T.TimestampType, T.TimestampNTZType), "timestamp"),
    (T.YearMonthIntervalType, "interval_year"),
    (T.DayTimeIntervalType, "interval_day"),
    (T.BinaryType, "binary"),
    (T.NullType, "null"),
)


def family(dt: T.DataType) -> str:
    """A coarse class of a Spark type ('int', 'decimal', 'date', ...), or the type's class name."""
    return next((name for kinds, name in _FAMILIES if isinstance(dt, kinds)), type(dt).__name__)


def compatible(actual: T.DataType, declared: T.DataType) -> bool:
    """Whether a table's column can stand for the plan's declared type without a cast.

    Integers of any width and strings of any flavour keep their values; everything else must match.
    """
    fa, fd = family(actual), family(declared)
    if fa != fd:
        return False
    if fa == "decimal":
        return actual == declared
    if fa in ("int", "string", "timestamp"):
        return fa != "timestamp" or type(actual) is type(declared)
    return actual == declared
