"""Substrait types <-> Spark SQL types, in one place: the mapping tables below are the single source
(docs/types.md is generated from them by `tools/types_doc.py`).

Spark has no unsigned, time-of-day, UUID or fixed-length types: fixedchar/varchar read as string,
fixedbinary as binary, uuid as a 16-byte binary, the unsigned integers of `unsigned_integers.yaml` as the
smallest signed type that holds them; time-of-day, compound intervals and unknown user-defined types are
rejected with the plan path.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T
from substrait import plan_pb2
from substrait import type_pb2 as tp

from .errors import PlanInvalidError, UnsupportedFeatureError
from .walk import columns_of

# Spark timestamps and day-time intervals are microseconds. A timestamp type declared finer (7-12: DataFusion
# writes nanoseconds, 9, for every timestamp) still stands for Spark's: the data Spark holds has at most
# microseconds, so reading it as nanoseconds changes no value. Literals must then be whole microseconds
# (`literals.py`). Intervals above 6 stay refused.
_MAX_TS_PRECISION = 6
_MAX_DECLARED_TS_PRECISION = 12

# Types with no parameters: Substrait kind -> Spark type.
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
    "interval_year": T.YearMonthIntervalType(),
}

# The value range of each Spark integer type (overflow checks, checked casts).
INT_RANGE: dict[type[T.DataType], tuple[int, int]] = {
    T.ByteType: (-(2**7), 2**7 - 1),
    T.ShortType: (-(2**15), 2**15 - 1),
    T.IntegerType: (-(2**31), 2**31 - 1),
    T.LongType: (-(2**63), 2**63 - 1),
}

# Kinds Spark cannot hold, with the reason given to the user.
REJECTED: dict[str, str] = {
    "precision_time": "Spark 3.5 has no time-of-day type",
    "interval_compound": "Spark's calendar interval cannot be a DataFrame column type in PySpark 3.5",
    "func": "a function type is only valid as a lambda argument, not as a value",
    "unbound": "an unbound type must be resolved by the producer",
}

# Why each mapping is what it is (docs/types.md); kinds not listed here map exactly.
NOTES: dict[str, str] = {
    "varchar": "length not enforced (Spark DataFrame columns are plain strings)",
    "fixed_char": "length not enforced, no blank padding",
    "fixed_binary": "length not enforced",
    "uuid": "the 16 bytes, big-endian (Spark has no UUID type)",
    "decimal": "precision above 38 rejected",
    "precision_timestamp": "Spark holds microseconds: precision 7-12 (nanoseconds: DataFusion) reads microsecond data "
    "losslessly; a literal must be whole microseconds",
    "precision_timestamp_tz": "as precision_timestamp; values are UTC instants, shown in the session time zone",
    "interval_day": "subsecond precision 0-6; 7-9 rejected",
    "struct": "fields named f0, f1, ... (the plan's names are attached at the root)",
    "map": "keys are never null in Spark",
    "user_defined": "only the user-defined types listed below",
    "alias": "resolved through the plan's type_aliases",
}


@dataclass(frozen=True)
class UserType:
    """A user-defined type Spark can hold: its Spark type and, for unsigned integers, the value range."""

    spark: T.DataType
    low: int | None = None
    high: int | None = None
    note: str = ""


def _unsigned(bits: int, spark: T.DataType) -> UserType:
    return UserType(spark, 0, 2**bits - 1, f"0 to 2^{bits}-1, range enforced by literals, casts and arithmetic")


# User-defined types by `<extension stem>/<type name>` (the extension that declares them).
USER_DEFINED: dict[str, UserType] = {
    "unsigned_integers/u8": _unsigned(8, T.ShortType()),
    "unsigned_integers/u16": _unsigned(16, T.IntegerType()),
    "unsigned_integers/u32": _unsigned(32, T.LongType()),
    "unsigned_integers/u64": _unsigned(64, T.DecimalType(20, 0)),
}


def extension_stem(uri: str) -> str:
    """`functions_arithmetic` for its URN `extension:io.substrait:functions_arithmetic` or its URI."""
    return uri.rstrip("/").rpartition("/")[2].rpartition(":")[2].removesuffix(".yaml")


@dataclass(frozen=True)
class PlanTypes:
    """The plan's user-defined type anchors (-> `<stem>/<name>`) and type aliases, for `spark_type`.

    Types are translated in many places that have no plan at hand; the consumer activates its plan's
    declarations for the duration of a translation (`with plan_types.active(): ...`).
    """

    user: Mapping[int, str] = field(default_factory=dict)
    aliases: Mapping[int, tp.Type] = field(default_factory=dict)

    @classmethod
    def of(cls, plan: plan_pb2.Plan) -> PlanTypes:
        urns = {u.extension_urn_anchor: u.urn for u in plan.extension_urns}
        user: dict[int, str] = {}
        for ext in plan.extensions:
            if ext.WhichOneof("mapping_type") == "extension_type":
                d = ext.extension_type
                where = urns.get(d.extension_urn_reference, "")
                user[d.type_anchor] = f"{extension_stem(where)}/{d.name}"
        aliases = {a.type_alias_anchor: a.type for a in plan.type_aliases}
        return cls(user, aliases)

    @contextmanager
    def active(self) -> Iterator[None]:
        token = _plan_types.set(self)
        try:
            yield
        finally:
            _plan_types.reset(token)


_plan_types: ContextVar[PlanTypes | None] = ContextVar("substrait_plan_types", default=None)


def _declared() -> PlanTypes:
    return _plan_types.get() or PlanTypes()


def declared_user_types() -> Mapping[int, str]:
    """The active plan's user-defined type anchors, as `<extension stem>/<name>` (empty outside a plan)."""
    return _declared().user


def user_type(t: tp.Type, path: str = "type") -> tuple[str, UserType]:
    """The key (`unsigned_integers/u8`) and mapping of a user-defined type, or a clear error."""
    return user_type_of(t.user_defined.type_reference, path)


def user_type_of(ref: int, path: str) -> tuple[str, UserType]:
    """`user_type` by the type anchor the plan declares."""
    key = _declared().user.get(ref)
    if key is None:
        raise PlanInvalidError(f"user-defined type reference {ref} names no declared extension type", path)
    mapped = USER_DEFINED.get(key)
    if mapped is None:
        raise UnsupportedFeatureError(f"user-defined type {key} has no Spark equivalent", path)
    return key, mapped


def value_range(t: tp.Type, path: str = "type") -> tuple[int, int] | None:
    """The value range a type adds to its Spark type (unsigned integers), else None."""
    t = resolve_alias(t, path)
    if t.WhichOneof("kind") != "user_defined":
        return None
    mapped = user_type(t, path)[1]
    return None if mapped.low is None or mapped.high is None else (mapped.low, mapped.high)


def within_range(col: Column, t: tp.Type, path: str = "type") -> Column | None:
    """The condition that `col` (already cast to `t`'s Spark type) lies in `t`'s own range, if it has one:
    a u8 is a smallint, but only 0..255 are u8 values."""
    bounds = value_range(t, path)
    if bounds is None:
        return None
    lo, hi = bounds
    return (col >= F.lit(lo)) & (col <= (F.lit(decimal.Decimal(hi)) if hi >= 2**63 else F.lit(hi)))


def resolve_alias(t: tp.Type, path: str) -> tp.Type:
    """The type an alias reference stands for (other types unchanged)."""
    if t.WhichOneof("kind") != "alias":
        return t
    ref = t.alias.type_alias_reference
    target = _declared().aliases.get(ref)
    if target is None:
        raise PlanInvalidError(f"type alias reference {ref} names no type alias of the plan", path)
    return target


def _decimal(t: tp.Type, path: str) -> T.DataType:
    precision = t.decimal.precision or 38
    if precision > 38:
        raise UnsupportedFeatureError(f"decimal precision {precision} exceeds Spark's maximum 38", path)
    return T.DecimalType(precision, t.decimal.scale)


def _timestamp(kind: str, spark: T.DataType) -> Callable[[tp.Type, str], T.DataType]:
    def build(t: tp.Type, path: str) -> T.DataType:
        precision = getattr(t, kind).precision
        if precision > _MAX_DECLARED_TS_PRECISION:
            raise PlanInvalidError(f"{kind} with precision {precision}: the spec allows 0-12", path)
        return spark

    return build


def _interval_day(t: tp.Type, path: str) -> T.DataType:
    i = t.interval_day
    if i.HasField("precision") and i.precision > _MAX_TS_PRECISION:
        raise UnsupportedFeatureError(
            f"interval_day with precision {i.precision}: Spark intervals hold at most microseconds", path
        )
    return T.DayTimeIntervalType()


def _struct(t: tp.Type, path: str) -> T.DataType:
    return T.StructType(
        [
            T.StructField(f"f{i}", spark_type(ft, f"{path}.struct.types[{i}]"), nullable(ft))
            for i, ft in enumerate(t.struct.types)
        ]
    )


def _list(t: tp.Type, path: str) -> T.DataType:
    el = t.list.type
    return T.ArrayType(spark_type(el, f"{path}.list.type"), nullable(el))


def _map(t: tp.Type, path: str) -> T.DataType:
    return T.MapType(
        spark_type(t.map.key, f"{path}.map.key"),
        spark_type(t.map.value, f"{path}.map.value"),
        nullable(t.map.value),
    )


# Types with parameters or inner types: Substrait kind -> builder(type, path).
_BUILT: dict[str, Callable[[tp.Type, str], T.DataType]] = {
    "decimal": _decimal,
    "precision_timestamp": _timestamp("precision_timestamp", T.TimestampNTZType()),
    "precision_timestamp_tz": _timestamp("precision_timestamp_tz", T.TimestampType()),
    "interval_day": _interval_day,
    "struct": _struct,
    "list": _list,
    "map": _map,
    "user_defined": lambda t, path: user_type(t, path)[1].spark,
    "alias": lambda t, path: spark_type(resolve_alias(t, path), f"{path}.alias"),
}


def spark_type(t: tp.Type, path: str = "type") -> T.DataType:
    """Map a Substrait type to the Spark type that holds its values exactly."""
    kind = t.WhichOneof("kind")
    if kind is None:
        raise PlanInvalidError("type has no kind set", path)
    if kind in _SIMPLE:
        return _SIMPLE[kind]
    if kind in _BUILT:
        return _BUILT[kind](t, path)
    raise UnsupportedFeatureError(f"type {kind}: {REJECTED.get(kind, 'no Spark equivalent')}", path)


def nullable(t: tp.Type) -> bool:
    """Substrait nullability of a type (unspecified counts as nullable)."""
    kind = t.WhichOneof("kind")
    if kind is None:
        return True
    n = getattr(getattr(t, kind), "nullability", tp.Type.NULLABILITY_UNSPECIFIED)
    return n != tp.Type.NULLABILITY_REQUIRED


# --- Spark -> Substrait ----------------------------------------------------------------------------------------

# The reverse of the simple mappings where Spark's type is the natural home of the Substrait kind.
_SIMPLE_REVERSE: dict[type[T.DataType], str] = {
    T.BooleanType: "bool",
    T.ByteType: "i8",
    T.ShortType: "i16",
    T.IntegerType: "i32",
    T.LongType: "i64",
    T.FloatType: "fp32",
    T.DoubleType: "fp64",
    T.StringType: "string",
    T.BinaryType: "binary",
    T.DateType: "date",
    T.YearMonthIntervalType: "interval_year",
}


def _n(is_nullable: bool) -> tp.Type.Nullability.ValueType:
    return tp.Type.NULLABILITY_NULLABLE if is_nullable else tp.Type.NULLABILITY_REQUIRED


def substrait_type(dt: T.DataType, is_nullable: bool = True, path: str = "type") -> tp.Type:
    """The Substrait type of a Spark type (a table's schema, a DataFrame's columns): `spark_type`'s inverse."""
    out = tp.Type()
    simple = _SIMPLE_REVERSE.get(type(dt))
    if simple is not None:
        getattr(out, simple).nullability = _n(is_nullable)
    elif isinstance(dt, T.CharType):
        out.fixed_char.length, out.fixed_char.nullability = dt.length, _n(is_nullable)
    elif isinstance(dt, T.VarcharType):
        out.varchar.length, out.varchar.nullability = dt.length, _n(is_nullable)
    elif isinstance(dt, T.DecimalType):
        out.decimal.precision, out.decimal.scale = dt.precision, dt.scale
        out.decimal.nullability = _n(is_nullable)
    elif isinstance(dt, (T.TimestampType, T.TimestampNTZType)):
        ts = out.precision_timestamp_tz if isinstance(dt, T.TimestampType) else out.precision_timestamp
        ts.precision, ts.nullability = _MAX_TS_PRECISION, _n(is_nullable)
    elif isinstance(dt, T.DayTimeIntervalType):
        out.interval_day.precision, out.interval_day.nullability = _MAX_TS_PRECISION, _n(is_nullable)
    elif isinstance(dt, T.ArrayType):
        out.list.type.CopyFrom(substrait_type(dt.elementType, dt.containsNull, f"{path}.list.type"))
        out.list.nullability = _n(is_nullable)
    elif isinstance(dt, T.MapType):
        out.map.key.CopyFrom(substrait_type(dt.keyType, False, f"{path}.map.key"))
        out.map.value.CopyFrom(substrait_type(dt.valueType, dt.valueContainsNull, f"{path}.map.value"))
        out.map.nullability = _n(is_nullable)
    elif isinstance(dt, T.StructType):
        for i, f in enumerate(dt.fields):
            out.struct.types.append(substrait_type(f.dataType, f.nullable, f"{path}.struct.types[{i}]"))
        out.struct.nullability = _n(is_nullable)
    else:
        raise UnsupportedFeatureError(f"Spark type {dt.simpleString()} has no Substrait equivalent", path)
    return out


def named_struct(schema: T.StructType) -> tp.NamedStruct:
    """A Spark schema as a Substrait NamedStruct (nested struct field names depth-first, as the spec says)."""
    out = tp.NamedStruct()
    out.struct.nullability = tp.Type.NULLABILITY_REQUIRED

    def names(dt: T.DataType) -> Iterator[str]:
        if isinstance(dt, T.StructType):
            for f in dt.fields:
                yield f.name
                yield from names(f.dataType)
        elif isinstance(dt, T.ArrayType):
            yield from names(dt.elementType)
        elif isinstance(dt, T.MapType):
            yield from names(dt.keyType)
            yield from names(dt.valueType)

    out.names.extend(names(schema))
    for i, f in enumerate(schema.fields):
        out.struct.types.append(substrait_type(f.dataType, f.nullable, f"struct.types[{i}]"))
    return out


def schema_of(named: tp.NamedStruct, path: str = "base_schema") -> tuple[list[str], list[T.DataType]]:
    """Top-level column names and Spark types of a NamedStruct; struct fields take their nested names."""
    columns = columns_of(named, path)
    nested = iter(named.names)
    types = []
    for k, (_, t) in enumerate(columns):
        next(nested)  # the column's own name
        types.append(_with_field_names(spark_type(t, f"{path}.struct.types[{k}]"), nested))
    return [n for n, _ in columns], types


def _with_field_names(dt: T.DataType, names: Iterator[str]) -> T.DataType:
    """`dt` with its struct fields named by `names`, depth-first (a NamedStruct's order)."""
    if isinstance(dt, T.StructType):
        fields = []
        for f in dt.fields:
            name = next(names)
            fields.append(T.StructField(name, _with_field_names(f.dataType, names), f.nullable))
        return T.StructType(fields)
    if isinstance(dt, T.ArrayType):
        return T.ArrayType(_with_field_names(dt.elementType, names), dt.containsNull)
    if isinstance(dt, T.MapType):
        key = _with_field_names(dt.keyType, names)
        return T.MapType(key, _with_field_names(dt.valueType, names), dt.valueContainsNull)
    return dt


def _all_nullable(dt: T.DataType) -> T.DataType:
    """`dt` with every inner field, element and map value nullable (for comparing shapes)."""
    if isinstance(dt, T.StructType):
        return T.StructType([T.StructField(f.name, _all_nullable(f.dataType), True) for f in dt.fields])
    if isinstance(dt, T.ArrayType):
        return T.ArrayType(_all_nullable(dt.elementType), True)
    if isinstance(dt, T.MapType):
        return T.MapType(_all_nullable(dt.keyType), _all_nullable(dt.valueType), True)
    return dt


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

    Integers of any width and strings of any flavour keep their values; everything else must match (a nested
    type's inner nullability aside: a table's non-null field can stand for the plan's nullable one).
    """
    fa, fd = family(actual), family(declared)
    if fa != fd:
        return False
    if fa == "decimal":
        return actual == declared
    if fa in ("int", "string", "timestamp"):
        return fa != "timestamp" or type(actual) is type(declared)
    return _all_nullable(actual) == _all_nullable(declared)
