"""Expression translators: each takes the consumer, the Substrait message, the scope and the plan path.

They are wired into `SubstraitConsumer` (one overridable method per expression kind); subqueries live in
`subqueries.py` because they change the relation the expression is evaluated over.
"""

from __future__ import annotations

import functools
import operator
from typing import TYPE_CHECKING

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T
from substrait import algebra_pb2 as alg

from .. import types as ty
from ..errors import PlanInvalidError, UnsupportedFeatureError
from ..loading.extensions import FunctionRef
from ..types import INT_RANGE, family, spark_type
from .conversions import Conversion, conversion
from .functions import PREDICATES, Call
from .functions.argument_types import comparable as comparable_families
from .functions.argument_types import string_read_as
from .in_lists import in_list
from .magnitude import fits_decimal, magnitude
from .scope import Scope, Typed

if TYPE_CHECKING:
    from .consumer import SubstraitConsumer

Expression = alg.Expression
Segment = Expression.ReferenceSegment


# --- field references --------------------------------------------------------------------------------------


def stray_rel_reference(anchor: int) -> str:
    """The refusal of an outer reference to relation `anchor` that no enclosing lateral join's right input takes."""
    return f"outer reference to relation {anchor} outside a lateral join's right input"


def selection(cx: SubstraitConsumer, ref: Expression.FieldReference, scope: Scope, path: str) -> Typed:
    root = ref.WhichOneof("root_type")
    native_outer = False
    if root == "expression":
        base = cx.expression(ref.expression, scope, f"{path}.expression")
    elif root == "outer_reference":
        if ref.outer_reference.WhichOneof("outer_reference_type") == "rel_reference":
            # A LateralJoinRel rewrites the ones naming its left input (relations/lateral.py); any other is not
            # reachable from where it stands.
            anchor = ref.outer_reference.rel_reference
            raise UnsupportedFeatureError(stray_rel_reference(anchor), f"{path}.outer_reference")
        steps = ref.outer_reference.steps_out
        target = scope.up(steps) if steps > 0 else None
        if target is None:
            raise PlanInvalidError(f"outer reference steps_out={steps} has no enclosing query", path)
        base = None
        scope_for_root = target
        native_outer = target.native
    elif root == "lambda_parameter_reference":
        from .lambdas import parameter

        return parameter(ref, scope, path)
    elif root in ("root_reference", None):
        scope_for_root = scope
        base = None
    else:
        raise UnsupportedFeatureError(f"{root} field reference", path)

    kind = ref.WhichOneof("reference_type")
    if kind == "masked_reference":
        raise UnsupportedFeatureError("masked field reference in an expression", path)
    if kind != "direct_reference":
        raise PlanInvalidError("field reference without a reference segment", path)
    seg = ref.direct_reference
    if base is None:
        if seg.WhichOneof("reference_type") != "struct_field":
            raise PlanInvalidError("a root field reference must start with a struct field", path)
        rel = scope_for_root.rel
        i = seg.struct_field.field
        if not 0 <= i < len(rel.names):
            raise PlanInvalidError(f"field reference {i} out of range: the input has {len(rel.names)} columns", path)
        # Column.outer is Spark 4's: pyspark 3.5's stubs, which mypy reads, take it for a struct field.
        base = Typed(rel.col(i).outer() if native_outer else rel.col(i), rel.types[i])  # type: ignore[operator]
        if not seg.struct_field.HasField("child"):
            return base
        seg = seg.struct_field.child
    return _segment(base, seg, f"{path}.direct_reference")


def _segment(base: Typed, seg: Expression.ReferenceSegment, path: str) -> Typed:
    """Walk nested struct/list/map segments below a column."""
    nxt: Segment.StructField | Segment.ListElement | Segment.MapKey
    while True:
        kind = seg.WhichOneof("reference_type")
        if kind == "struct_field":
            t = base.type
            if not isinstance(t, T.StructType) or not 0 <= seg.struct_field.field < len(t.fields):
                raise PlanInvalidError(f"struct field {seg.struct_field.field} of a non-struct or out of range", path)
            f = t.fields[seg.struct_field.field]
            base, nxt = Typed(base.col.getField(f.name), f.dataType), seg.struct_field
        elif kind == "list_element":
            t = base.type
            if not isinstance(t, T.ArrayType):
                raise PlanInvalidError("list element of a non-list", path)
            base, nxt = Typed(base.col.getItem(seg.list_element.offset), t.elementType), seg.list_element
        elif kind == "map_key":
            t = base.type
            if not isinstance(t, T.MapType):
                raise PlanInvalidError("map key of a non-map", path)
            from .literals import to_column

            key = to_column(seg.map_key.map_key, f"{path}.map_key")
            base, nxt = Typed(base.col[key.col], t.valueType), seg.map_key
        else:
            raise PlanInvalidError("empty reference segment", path)
        if not nxt.HasField("child"):
            return base
        seg = nxt.child


# --- functions ---------------------------------------------------------------------------------------------


def function_arguments(cx: SubstraitConsumer, args, scope: Scope, path: str) -> list[Typed | str]:
    """Value and enum arguments (a plan's deprecated `args` were read as `arguments` by the loader)."""
    out: list[Typed | str] = []
    for i, a in enumerate(args):
        kind = a.WhichOneof("arg_type")
        p = f"{path}.arguments[{i}]"
        if kind == "value":
            out.append(cx.expression(a.value, scope, f"{p}.value"))
        elif kind == "enum":
            out.append(a.enum)
        elif kind == "type":
            raise UnsupportedFeatureError("type arguments", p)
        else:
            raise PlanInvalidError("function argument with nothing set", p)
    return out


def options_of(options, ref: FunctionRef, path: str) -> dict[str, list[str]]:
    """A call's options by lower-case name: the plan's preferences, and the options its function's name fixes (a
    producer's alias, `FunctionRef.with_implied`)."""
    return ref.with_implied({o.name.lower(): list(o.preference) for o in options}, path)


def scalar_function(cx: SubstraitConsumer, fn: Expression.ScalarFunction, scope: Scope, path: str) -> Typed:
    rebuilt = in_list(cx, fn, scope, path)  # Calcite's expanded IN list, as Spark SQL's In
    if rebuilt is not None:
        return rebuilt
    ref = cx.extensions.function(fn.function_reference, f"{path}.function_reference")
    out_type = spark_type(fn.output_type, f"{path}.output_type") if fn.HasField("output_type") else None
    call = Call(
        ref,
        function_arguments(cx, fn.arguments, scope, path),
        options_of(fn.options, ref, path),
        out_type,
        path,
    )
    col = cx.call_scalar(call)
    result_type = out_type or _guess_type(call)
    return Typed(col, result_type)


def _guess_type(call: Call) -> T.DataType:
    """A result type when the producer left `output_type` out (older plans)."""
    if call.name in PREDICATES:
        return T.BooleanType()
    values = call.values
    return values[0].type if values else T.NullType()


_TEMPORAL_FROM_STRING = {"date": T.DateType(), "timestamp": T.TimestampType()}


def comparable(*types: T.DataType) -> bool:
    """Whether values of these types compare as they are: one family, numbers, or strings with binaries."""
    return comparable_families({family(t) for t in types} - {"null"})


def coerce_comparison(call: Call) -> None:
    """Read a string compared with a date or timestamp as a value of that type, explicitly, so the comparison is
    never a string comparison (ibis compares a date column with '1995-03-15'). Other incomparable arguments are
    refused before (`argument_types.argument_type_refusal`)."""
    if comparable(*(v.type for v in call.values)):
        return
    target = string_read_as({family(v.type) for v in call.values} - {"null"})
    if target is None:
        return
    spark_t: T.DataType = _TEMPORAL_FROM_STRING[target]
    if target == "timestamp":
        spark_t = next(v.type for v in call.values if family(v.type) == "timestamp")
    call.arguments = [
        Typed(a.col.cast(spark_t), spark_t) if isinstance(a, Typed) and family(a.type) == "string" else a
        for a in call.arguments
    ]


# --- conditionals and lists --------------------------------------------------------------------------------


def if_then(cx: SubstraitConsumer, e: Expression.IfThen, scope: Scope, path: str) -> Typed:
    coalesced = _coalesce(cx, e, scope, path)
    if coalesced is not None:
        return coalesced
    col: Column | None = None
    result_type: T.DataType | None = None
    operand = _case_operand(cx, e, scope, path)
    for i, clause in enumerate(e.ifs):
        if operand is not None and i == 0:
            continue
        cond = cx.expression(clause.__getattribute__("if"), scope, f"{path}.ifs[{i}].if")
        if operand is not None:  # a simple CASE's value: SQL's equality with the operand
            if not comparable(operand.type, cond.type):
                raise PlanInvalidError(f"CASE operand compared with a value of type {cond.type.simpleString()}", path)
            cond = Typed(operand.col == cond.col, T.BooleanType())
        then = cx.expression(clause.then, scope, f"{path}.ifs[{i}].then")
        col = F.when(cond.col, then.col) if col is None else col.when(cond.col, then.col)
        result_type = result_type or then.type
    if col is None:
        raise PlanInvalidError("if-then with no clauses", path)
    assert result_type is not None, "set with the first clause"
    if e.HasField("else"):
        other = cx.expression(getattr(e, "else"), scope, f"{path}.else")
        col = col.otherwise(other.col)
    return Typed(col, result_type)


def _coalesce(cx: SubstraitConsumer, e: Expression.IfThen, scope: Scope, path: str) -> Typed | None:
    """`CASE WHEN x IS NOT NULL THEN x [WHEN y IS NOT NULL THEN y …] [ELSE z] END`, as producers write
    COALESCE(x, y, …, z) (DataFusion): Spark's coalesce, the same value and Spark SQL's plan for COALESCE."""
    if not e.ifs or cx.quirks.case_operand(e):
        return None
    for clause in e.ifs:
        test = clause.__getattribute__("if")
        fn = test.scalar_function if test.WhichOneof("rex_type") == "scalar_function" else None
        if fn is None or len(fn.arguments) != 1 or fn.arguments[0].value != clause.then:
            return None
        ref = cx.extensions.functions.get(fn.function_reference)
        if ref is None or ref.base != "is_not_null":
            return None
    values = [cx.expression(c.then, scope, f"{path}.ifs[{i}].then") for i, c in enumerate(e.ifs)]
    if e.HasField("else"):
        values.append(cx.expression(getattr(e, "else"), scope, f"{path}.else"))
    return Typed(F.coalesce(*[v.col for v in values]), values[0].type)


def _case_operand(cx: SubstraitConsumer, e: Expression.IfThen, scope: Scope, path: str) -> Typed | None:
    """The operand of a simple CASE a producer writes as the IfThen's first clause (`Quirks.case_operand`)."""
    if not cx.quirks.case_operand(e):
        return None
    return cx.expression(e.ifs[0].__getattribute__("if"), scope, f"{path}.ifs[0].if")


def switch(cx: SubstraitConsumer, e: Expression.SwitchExpression, scope: Scope, path: str) -> Typed:
    match = cx.expression(e.match, scope, f"{path}.match")
    col: Column | None = None
    result_type: T.DataType | None = None
    for i, clause in enumerate(e.ifs):
        value = cx.literal(clause.__getattribute__("if"), scope, f"{path}.ifs[{i}].if")
        then = cx.expression(clause.then, scope, f"{path}.ifs[{i}].then")
        cond = match.col == value.col
        col = F.when(cond, then.col) if col is None else col.when(cond, then.col)
        result_type = result_type or then.type
    if col is None:
        raise PlanInvalidError("switch with no clauses", path)
    assert result_type is not None, "set with the first clause"
    if e.HasField("else"):
        col = col.otherwise(cx.expression(getattr(e, "else"), scope, f"{path}.else").col)
    return Typed(col, result_type)


def singular_or_list(cx: SubstraitConsumer, e: Expression.SingularOrList, scope: Scope, path: str) -> Typed:
    value = cx.expression(e.value, scope, f"{path}.value")
    options = [cx.expression(o, scope, f"{path}.options[{i}]").col for i, o in enumerate(e.options)]
    if not options:
        raise PlanInvalidError("IN list with no options", path)
    return Typed(value.col.isin(*options), T.BooleanType())


def multi_or_list(cx: SubstraitConsumer, e: Expression.MultiOrList, scope: Scope, path: str) -> Typed:
    values = [cx.expression(v, scope, f"{path}.value[{i}]").col for i, v in enumerate(e.value)]
    rows = []
    for r, rec in enumerate(e.options):
        fields = [cx.expression(f, scope, f"{path}.options[{r}].fields[{i}]").col for i, f in enumerate(rec.fields)]
        if len(fields) != len(values):
            raise PlanInvalidError(f"record of {len(fields)} values against {len(values)}", f"{path}.options[{r}]")
        rows.append(functools.reduce(operator.and_, [v == f for v, f in zip(values, fields, strict=True)]))
    if not rows:
        raise PlanInvalidError("multi IN list with no options", path)
    return Typed(functools.reduce(operator.or_, rows), T.BooleanType())


# --- cast --------------------------------------------------------------------------------------------------

_SAFE_TARGETS = {"string"}


def _cannot_fail(src: T.DataType, dst: T.DataType) -> bool:
    """Casts that never fail on any input value, so THROW_EXCEPTION needs no runtime check: those that keep every
    value (`conversions.conversion`: WIDENING) and those that can only round."""
    fs, fd = family(src), family(dst)
    if fd in _SAFE_TARGETS or src == dst or fs == "null" or conversion(src, dst) is Conversion.WIDENING:
        return True
    widths: list[type[T.DataType]] = [T.ByteType, T.ShortType, T.IntegerType, T.LongType]
    if fs == fd == "int":
        return widths.index(type(src)) <= widths.index(type(dst))
    if fs == "int" and fd == "float":
        return True
    if isinstance(src, T.DecimalType) and isinstance(dst, T.DecimalType):
        # Fewer fraction digits only round; rounding up can carry into one more integer digit.
        src_int, dst_int = src.precision - src.scale, dst.precision - dst.scale
        return dst_int > src_int or (dst_int == src_int and dst.scale >= src.scale)
    if fs in ("decimal", "float") and fd == "float":
        return isinstance(dst, T.DoubleType) or isinstance(src, T.FloatType)
    return False


def _fits_integer(value: Typed, target: T.DataType) -> Column | None:
    """When a numeric value fits an integer target (None: always, or not a numeric -> integer cast).

    Spark's legacy (non-ANSI) cast wraps integers around (300 -> tinyint is 44) and saturates fractional
    numbers (1e20 -> int is 2147483647); Substrait casts fail instead. Fractions truncate toward zero.
    """
    src = family(value.type)
    if family(target) != "int" or src not in ("int", "float", "decimal") or _cannot_fail(value.type, target):
        return None
    lo, hi = INT_RANGE[type(target)]
    x = value.col
    if src == "decimal":
        x = F.when(x < 0, F.ceil(x)).otherwise(F.floor(x))
    if src == "float":
        # Exact bounds in double: lo - 1 and hi + 1 for the narrow types, -2^63 and 2^63 for bigint.
        # NaN compares greater than everything in Spark, so it never fits.
        low = x >= F.lit(float(lo)) if isinstance(target, T.LongType) else x > F.lit(float(lo - 1))
        return low & (x < F.lit(float(hi + 1)))
    return (x >= F.lit(lo)) & (x <= F.lit(hi))


def cast(cx: SubstraitConsumer, e: Expression.Cast, scope: Scope, path: str) -> Typed:
    value = cx.expression(e.input, scope, f"{path}.input")
    target = spark_type(e.type, f"{path}.type")
    casted = ty.cast(value.col, target)
    fits = _fits_integer(value, target)
    in_range = ty.within_range(casted, e.type, f"{path}.type")  # unsigned integers: narrower than their Spark type
    if in_range is not None:
        fits = in_range if fits is None else fits & in_range
    throw = e.failure_behavior == Expression.Cast.FAILURE_BEHAVIOR_THROW_EXCEPTION
    if throw and in_range is None and isinstance(target, T.DecimalType) and not _cannot_fail(value.type, target):
        throw = not fits_decimal(magnitude(cx, e.input, scope, f"{path}.input"), target)  # then it cannot fail
    if throw and (in_range is not None or not _cannot_fail(value.type, target)):
        # Spark's non-ANSI cast yields NULL for a value it cannot convert; the plan asked for an error.
        message = f"cast to {target.simpleString()} failed at {path}"
        failed = casted.isNull() if fits is None else (casted.isNull() | ~fits)
        casted = F.when(value.col.isNotNull() & failed, F.raise_error(F.lit(message))).otherwise(casted)
    elif fits is not None:
        casted = F.when(fits, casted)
    return Typed(casted, target)


# --- nested constructors and enums -------------------------------------------------------------------------


def nested(cx: SubstraitConsumer, e: Expression.Nested, scope: Scope, path: str) -> Typed:
    kind = e.WhichOneof("nested_type")
    if kind == "struct":
        fields = [cx.expression(f, scope, f"{path}.struct.fields[{i}]") for i, f in enumerate(e.struct.fields)]
        col = F.struct(*[f.col.alias(f"f{i}") for i, f in enumerate(fields)])
        return Typed(col, T.StructType([T.StructField(f"f{i}", f.type) for i, f in enumerate(fields)]))
    if kind == "list":
        items = [cx.expression(v, scope, f"{path}.list.values[{i}]") for i, v in enumerate(e.list.values)]
        if not items:
            raise PlanInvalidError("list constructor with no values", path)
        return Typed(F.array(*[i.col for i in items]), T.ArrayType(items[0].type))
    if kind == "map":
        pairs = [
            (
                cx.expression(kv.key, scope, f"{path}.map.key_values[{i}].key"),
                cx.expression(kv.value, scope, f"{path}.map.key_values[{i}].value"),
            )
            for i, kv in enumerate(e.map.key_values)
        ]
        if not pairs:
            raise PlanInvalidError("map constructor with no entries", path)
        col = F.create_map(*[c for k, v in pairs for c in (k.col, v.col)])
        return Typed(col, T.MapType(pairs[0][0].type, pairs[0][1].type))
    raise PlanInvalidError("nested expression with nothing set", path)
