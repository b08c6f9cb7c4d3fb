"""Substrait literals as Spark literal columns, typed exactly as the plan declares them."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from collections.abc import Callable
from typing import Any

from google.protobuf import wrappers_pb2
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T
from substrait import algebra_pb2 as alg
from substrait import type_pb2 as tp

from ..errors import PlanInvalidError, UnsupportedFeatureError
from ..plan_visitor import KindTable, register
from ..type_text import compound_interval_kind
from ..types import cast, resolve_alias, spark_type, user_type_of
from .relation import cached
from .scope import Typed, literal

Literal = alg.Expression.Literal
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)
_EXACT = decimal.Context(prec=80)


def _decimal(lit: Literal, path: str) -> tuple[Any, T.DataType]:
    d = lit.decimal
    if len(d.value) != 16:
        raise PlanInvalidError(f"decimal literal must be 16 bytes, got {len(d.value)}", path)
    unscaled = int.from_bytes(d.value, "little", signed=True)
    # Exact: the default context (28 digits) would round a 38-digit value.
    value = decimal.Decimal(unscaled).scaleb(-d.scale, _EXACT)
    return value, T.DecimalType(d.precision or 38, d.scale)


# User-defined literal encodings of a single integer: the `value: string` structure (unsigned_integers.yaml),
# or a protobuf wrapper in `value`.
_WRAPPERS = ("google.protobuf.StringValue", "google.protobuf.UInt64Value", "google.protobuf.UInt32Value",
             "google.protobuf.Int64Value", "google.protobuf.Int32Value")  # fmt: skip
_INTEGER_FIELDS = ("string", "i8", "i16", "i32", "i64")


def _user_defined(lit: Literal, path: str) -> tuple[Any, T.DataType]:
    """A literal of a mapped user-defined type (the unsigned integers): its integer, range-checked."""
    u = lit.user_defined
    ref = u.type_reference
    if u.WhichOneof("type_anchor_type") == "type_alias_reference":
        aliased = tp.Type()
        aliased.alias.type_alias_reference = u.type_alias_reference
        target = resolve_alias(aliased, f"{path}.user_defined.type_alias_reference")
        if target.WhichOneof("kind") != "user_defined":
            raise PlanInvalidError("user-defined literal whose type alias is not a user-defined type", path)
        ref = target.user_defined.type_reference
    key, mapped = user_type_of(ref, f"{path}.user_defined.type_reference")
    if mapped.low is None or mapped.high is None:
        raise UnsupportedFeatureError(f"literal of user-defined type {key}", path)
    text = _user_defined_text(u, key, path)
    try:
        value = int(text)
    except ValueError:
        raise PlanInvalidError(f"{key} literal {text!r} is not an integer", path) from None
    if not mapped.low <= value <= mapped.high:
        raise PlanInvalidError(f"{key} literal {value} is out of range {mapped.low}..{mapped.high}", path)
    return (decimal.Decimal(value) if isinstance(mapped.spark, T.DecimalType) else value), mapped.spark


def _user_defined_text(u: Literal.UserDefined, key: str, path: str) -> str:
    kind = u.WhichOneof("val")
    if kind == "struct" and len(u.struct.fields) == 1:
        field = u.struct.fields[0]
        fk = field.WhichOneof("literal_type")
        if fk in _INTEGER_FIELDS:
            return str(getattr(field, fk))
    if kind == "value" and u.value.TypeName() in _WRAPPERS:
        wrapper = getattr(wrappers_pb2, u.value.TypeName().rpartition(".")[2])()
        u.value.Unpack(wrapper)
        return str(wrapper.value)
    raise PlanInvalidError(f"{key} literal must hold one value (a string structure field or a wrapper)", path)


def _micros_to_naive(micros: int) -> dt.datetime:
    return _EPOCH + dt.timedelta(microseconds=micros)


def _precision_to_micros(value: int, precision: int, path: str) -> int:
    """A timestamp literal in microseconds: exact, or refused (a finer one with digits below a microsecond)."""
    if precision <= 6:
        return value * 10 ** (6 - precision)
    micros, rest = divmod(value, 10 ** (precision - 6))
    if rest:
        raise UnsupportedFeatureError(
            f"timestamp literal {value} at precision {precision} has digits below a microsecond (Spark holds "
            "microseconds)",
            path,
        )
    return micros


def _day_to_second(i: Literal.IntervalDayToSecond, path: str) -> dt.timedelta:
    """The interval exactly: `subseconds` count units of 10^-precision (the loader read the deprecated
    `microseconds` as precision 6); digits below a microsecond are refused, as for timestamps."""
    p = i.precision
    if p <= 6:
        micros = i.subseconds * 10 ** (6 - p)
    else:
        micros, rest = divmod(i.subseconds, 10 ** (p - 6))
        if rest:
            raise UnsupportedFeatureError(
                f"interval literal subseconds {i.subseconds} at precision {p} has digits below a microsecond "
                "(Spark intervals hold microseconds)",
                path,
            )
    try:
        return dt.timedelta(days=i.days, seconds=i.seconds, microseconds=micros)
    except OverflowError:  # beyond any interval the spec allows (days within +-3,650,000)
        raise PlanInvalidError(
            f"interval literal out of range: {i.days} days, {i.seconds} seconds, {i.subseconds} subseconds", path
        ) from None


def _year_to_month(i: Literal.IntervalYearToMonth) -> int:
    return i.years * 12 + i.months


COMPOUND_BOTH = "interval_compound literal with both months and days/seconds: Spark has no year-to-second interval"


def _compound(lit: Literal, path: str) -> tuple[Any, T.DataType]:
    """A compound interval with no months is a day-time interval, one with no days/seconds a year-month one
    (DataFusion writes `INTERVAL 5 DAY` so); one with both has no Spark type."""
    c = lit.interval_compound
    kind = compound_interval_kind(c)
    if kind == "interval_day_to_second":
        at = f"{path}.interval_compound.interval_day_to_second"
        return _day_to_second(c.interval_day_to_second, at), T.DayTimeIntervalType()
    if kind == "interval_year_to_month":
        return _year_to_month(c.interval_year_to_month), T.YearMonthIntervalType()
    raise UnsupportedFeatureError(COMPOUND_BOTH, path)


# Literal kinds with a Python value and a Spark type (each builder takes the literal and its path).
_VALUES: dict[str, Callable[[Literal, str], tuple[Any, T.DataType]]] = {
    "boolean": lambda lit, path: (lit.boolean, T.BooleanType()),
    "i8": lambda lit, path: (lit.i8, T.ByteType()),
    "i16": lambda lit, path: (lit.i16, T.ShortType()),
    "i32": lambda lit, path: (lit.i32, T.IntegerType()),
    "i64": lambda lit, path: (lit.i64, T.LongType()),
    "fp32": lambda lit, path: (lit.fp32, T.FloatType()),
    "fp64": lambda lit, path: (lit.fp64, T.DoubleType()),
    "string": lambda lit, path: (lit.string, T.StringType()),
    "fixed_char": lambda lit, path: (lit.fixed_char, T.StringType()),
    "var_char": lambda lit, path: (lit.var_char.value, T.StringType()),
    "binary": lambda lit, path: (bytes(lit.binary), T.BinaryType()),
    "fixed_binary": lambda lit, path: (bytes(lit.fixed_binary), T.BinaryType()),
    "uuid": lambda lit, path: (bytes(uuid.UUID(bytes=bytes(lit.uuid)).bytes), T.BinaryType()),
    "date": lambda lit, path: (_EPOCH_DATE + dt.timedelta(days=lit.date), T.DateType()),
    "precision_timestamp": lambda lit, path: (
        _micros_to_naive(_precision_to_micros(lit.precision_timestamp.value, lit.precision_timestamp.precision, path)),
        T.TimestampNTZType(),
    ),
    "precision_timestamp_tz": lambda lit, path: (
        _micros_to_naive(
            _precision_to_micros(lit.precision_timestamp_tz.value, lit.precision_timestamp_tz.precision, path)
        ),
        T.TimestampType(),
    ),
    "interval_day_to_second": lambda lit, path: (
        _day_to_second(lit.interval_day_to_second, f"{path}.interval_day_to_second"),
        T.DayTimeIntervalType(),
    ),
    "interval_year_to_month": lambda lit, path: (_year_to_month(lit.interval_year_to_month), T.YearMonthIntervalType()),
    "interval_compound": _compound,
    "decimal": lambda lit, path: _decimal(lit, path),
    "user_defined": lambda lit, path: _user_defined(lit, path),
    "null": lambda lit, path: (None, spark_type(lit.null, f"{path}.null")),
}


def python_value(lit: Literal, path: str = "literal") -> tuple[Any, T.DataType]:
    """The literal's Python value and Spark type (for VALUES rows, LIMIT counts, LIKE patterns, options)."""
    kind = lit.WhichOneof("literal_type")
    if kind in _VALUES:
        return _VALUES[kind](lit, path)
    if kind is None:
        raise PlanInvalidError("literal has no value set", path)
    raise UnsupportedFeatureError(f"{kind} literal outside a column context", path)


def to_column(lit: Literal, path: str = "literal") -> Typed:
    """The literal as a Spark column of the plan's type (constant-folded by Catalyst)."""
    kind = lit.WhichOneof("literal_type")
    nested = _NESTED.get(kind or "")
    if nested:
        return nested(lit, path)
    value, type_ = python_value(lit, path)
    key = ("literal", type_.simpleString(), type(value).__name__, repr(value))
    return literal(cached(key, lambda: _lit_column(value, type_)), type_, value)


def _lit_column(value: Any, type_: T.DataType) -> Column:
    if value is None:
        return cast(F.lit(None), type_)
    if isinstance(type_, T.DateType):
        # Days since the epoch, not a Python date: py4j's java.sql.Date conversion fails before year 1000.
        return F.date_from_unix_date(F.lit((value - _EPOCH_DATE).days))
    if isinstance(type_, T.TimestampType):
        micros = (value - _EPOCH) // dt.timedelta(microseconds=1)
        return F.timestamp_micros(F.lit(micros))
    if isinstance(type_, T.TimestampNTZType):
        return cast(F.lit(value.isoformat(sep=" ")), type_)
    if isinstance(type_, T.YearMonthIntervalType):
        return F.make_ym_interval(F.lit(value // 12), F.lit(value % 12))
    if isinstance(type_, T.DayTimeIntervalType):
        col = F.lit(value)
        whole_days = value.seconds == 0 and value.microseconds == 0
        # Whole days as INTERVAL DAY so that date +/- interval stays a date, as in Spark SQL.
        return col.cast(T.DayTimeIntervalType(0, 0)) if whole_days else col
    # A Python int fitting 32 bits would otherwise be an int literal: a small i64 (or u32) must stay bigint.
    if isinstance(type_, (T.ByteType, T.ShortType, T.LongType, T.FloatType, T.DecimalType)):
        return cast(F.lit(value), type_)
    if isinstance(type_, T.BinaryType):
        return F.lit(bytearray(value))
    return F.lit(value)


def _struct(lit: Literal, path: str) -> Typed:
    fields = [to_column(f, f"{path}.struct.fields[{i}]") for i, f in enumerate(lit.struct.fields)]
    col = F.struct(*[f.col.alias(f"f{i}") for i, f in enumerate(fields)])
    return Typed(col, T.StructType([T.StructField(f"f{i}", f.type) for i, f in enumerate(fields)]))


def _list(lit: Literal, path: str) -> Typed:
    items = [to_column(v, f"{path}.list.values[{i}]") for i, v in enumerate(lit.list.values)]
    if not items:
        raise PlanInvalidError("list literal with no values (use empty_list)", path)
    return Typed(F.array(*[i.col for i in items]), T.ArrayType(items[0].type))


def _map(lit: Literal, path: str) -> Typed:
    pairs = [
        (
            to_column(kv.key, f"{path}.map.key_values[{i}].key"),
            to_column(kv.value, f"{path}.map.key_values[{i}].value"),
        )
        for i, kv in enumerate(lit.map.key_values)
    ]
    if not pairs:
        raise PlanInvalidError("map literal with no entries (use empty_map)", path)
    cols = [c for k, v in pairs for c in (k.col, v.col)]
    return Typed(F.create_map(*cols), T.MapType(pairs[0][0].type, pairs[0][1].type))


def _empty_list(lit: Literal, path: str) -> Typed:
    type_ = T.ArrayType(spark_type(lit.empty_list.type, f"{path}.empty_list.type"))
    return Typed(F.array().cast(type_), type_)


def _empty_map(lit: Literal, path: str) -> Typed:
    m = lit.empty_map
    type_ = T.MapType(spark_type(m.key, f"{path}.empty_map.key"), spark_type(m.value, f"{path}.empty_map.value"))
    return Typed(F.create_map().cast(type_), type_)


def _unsupported(reason: str) -> Callable[[Literal, str], Typed]:
    def fail(lit: Literal, path: str) -> Typed:
        raise UnsupportedFeatureError(reason, path)

    return fail


# Literal kinds Spark has no type for (validate reports them with these words).
REFUSED_LITERALS = {
    "precision_time": "precision_time literal: Spark has no time-of-day type",
}
_NESTED: dict[str, Callable[[Literal, str], Typed]] = {
    "struct": _struct,
    "list": _list,
    "map": _map,
    "empty_list": _empty_list,
    "empty_map": _empty_map,
    **{kind: _unsupported(reason) for kind, reason in REFUSED_LITERALS.items()},
}
register(KindTable.of("translator", "literal_type", {*_VALUES, *_NESTED} - set(REFUSED_LITERALS), REFUSED_LITERALS))
