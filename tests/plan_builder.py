"""Build Substrait plans by hand in tests, with the protobuf classes of substrait-protobuf 0.108.0.

A `PlanBuilder` owns the plan's extension declarations (functions are declared on first use) and
makes the root; everything else is a plain function returning a protobuf message::

    b = PlanBuilder()
    t = named("t", ["k", "v"], [i32(), string()])
    rel = filter_(t, b.call("gt", field(0), lit(1)))
    plan = b.plan(project(rel, field(1), emit=[2]), ["v"])

Literals take a Python value and (optionally) a Substrait type; `None` makes a typed null literal.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from substrait import algebra_pb2 as alg
from substrait import plan_pb2
from substrait import type_pb2 as tp
from substrait.extensions import extensions_pb2 as ext

Expr = alg.Expression
Rel = alg.Rel
Type = tp.Type

NULLABLE = Type.NULLABILITY_NULLABLE
REQUIRED = Type.NULLABILITY_REQUIRED

JoinRel = alg.JoinRel
SetRel = alg.SetRel
SortField = alg.SortField
Subquery = Expr.Subquery
CMP = Subquery.SetComparison
AggregateFunction = alg.AggregateFunction

ASC_NULLS_FIRST = SortField.SORT_DIRECTION_ASC_NULLS_FIRST
ASC_NULLS_LAST = SortField.SORT_DIRECTION_ASC_NULLS_LAST
DESC_NULLS_FIRST = SortField.SORT_DIRECTION_DESC_NULLS_FIRST
DESC_NULLS_LAST = SortField.SORT_DIRECTION_DESC_NULLS_LAST
CLUSTERED = SortField.SORT_DIRECTION_CLUSTERED

# Which extension file each function base name comes from (only for realistic plans; the consumer
# matches on the base name).
_URNS = {
    "arithmetic": "extension:io.substrait:functions_arithmetic",
    "comparison": "extension:io.substrait:functions_comparison",
    "boolean": "extension:io.substrait:functions_boolean",
    "string": "extension:io.substrait:functions_string",
    "datetime": "extension:io.substrait:functions_datetime",
    "aggregate": "extension:io.substrait:functions_aggregate_generic",
}
_FAMILY = {
    **dict.fromkeys(
        ["add", "subtract", "multiply", "divide", "modulus", "negate", "abs", "sum", "avg", "min", "max", "sum0"],
        "arithmetic",
    ),
    **dict.fromkeys(
        [
            "equal",
            "not_equal",
            "lt",
            "lte",
            "gt",
            "gte",
            "is_null",
            "is_not_null",
            "coalesce",
            "is_not_distinct_from",
            "is_distinct_from",
            "between",
        ],
        "comparison",
    ),
    **dict.fromkeys(["and", "or", "not", "xor"], "boolean"),
    **dict.fromkeys(["concat", "substring", "like", "upper", "lower"], "string"),
    **dict.fromkeys(["extract"], "datetime"),
    **dict.fromkeys(["count"], "aggregate"),
}


# --- types -------------------------------------------------------------------------------------------------


def _simple(kind: str, nullable: bool = True, **fields: Any) -> Type:
    t = Type()
    sub = getattr(t, kind)
    sub.SetInParent()
    sub.nullability = NULLABLE if nullable else REQUIRED
    for k, v in fields.items():
        setattr(sub, k, v)
    return t


def boolean(nullable: bool = True) -> Type:
    return _simple("bool", nullable)


def i8(nullable: bool = True) -> Type:
    return _simple("i8", nullable)


def i16(nullable: bool = True) -> Type:
    return _simple("i16", nullable)


def i32(nullable: bool = True) -> Type:
    return _simple("i32", nullable)


def i64(nullable: bool = True) -> Type:
    return _simple("i64", nullable)


def fp32(nullable: bool = True) -> Type:
    return _simple("fp32", nullable)


def fp64(nullable: bool = True) -> Type:
    return _simple("fp64", nullable)


def string(nullable: bool = True) -> Type:
    return _simple("string", nullable)


def varchar(length: int, nullable: bool = True) -> Type:
    return _simple("varchar", nullable, length=length)


def fixed_char(length: int, nullable: bool = True) -> Type:
    return _simple("fixed_char", nullable, length=length)


def binary(nullable: bool = True) -> Type:
    return _simple("binary", nullable)


def date(nullable: bool = True) -> Type:
    return _simple("date", nullable)


def timestamp(nullable: bool = True) -> Type:
    """precision_timestamp(6): what the removed `timestamp` type (microseconds) meant."""
    return precision_timestamp(6, nullable)


def precision_timestamp(precision: int = 6, nullable: bool = True) -> Type:
    return _simple("precision_timestamp", nullable, precision=precision)


def precision_timestamp_tz(precision: int = 6, nullable: bool = True) -> Type:
    return _simple("precision_timestamp_tz", nullable, precision=precision)


def interval_day(nullable: bool = True) -> Type:
    return _simple("interval_day", nullable, precision=6)


def interval_year(nullable: bool = True) -> Type:
    return _simple("interval_year", nullable)


def decimal_(precision: int, scale: int, nullable: bool = True) -> Type:
    return _simple("decimal", nullable, precision=precision, scale=scale)


def struct(*types: Type, nullable: bool = True) -> Type:
    t = _simple("struct", nullable)
    t.struct.types.extend(types)
    return t


def list_(element: Type, nullable: bool = True) -> Type:
    t = _simple("list", nullable)
    t.list.type.CopyFrom(element)
    return t


def map_(key: Type, value: Type, nullable: bool = True) -> Type:
    t = _simple("map", nullable)
    t.map.key.CopyFrom(key)
    t.map.value.CopyFrom(value)
    return t


def _infer(value: Any) -> Type:
    if isinstance(value, bool):
        return boolean()
    if isinstance(value, int):
        return i32()
    if isinstance(value, float):
        return fp64()
    if isinstance(value, str):
        return string()
    if isinstance(value, bytes):
        return binary()
    if isinstance(value, dt.datetime):
        return precision_timestamp()
    if isinstance(value, dt.date):
        return date()
    if isinstance(value, decimal.Decimal):
        exp = value.as_tuple().exponent
        scale = -exp if isinstance(exp, int) and exp < 0 else 0
        return decimal_(max(len(value.as_tuple().digits), scale + 1), scale)
    raise TypeError(f"give a type for literal {value!r}")


# --- literals ----------------------------------------------------------------------------------------------

_EPOCH = dt.datetime(1970, 1, 1)


def literal(value: Any, type_: Type | None = None) -> Expr.Literal:
    """A Literal message of `type_` (inferred from the Python value when not given)."""
    t = type_ if type_ is not None else _infer(value)
    kind = t.WhichOneof("kind")
    sub = getattr(t, kind)
    out = Expr.Literal()
    if value is None:
        out.null.CopyFrom(t)
        return out
    out.nullable = getattr(sub, "nullability", REQUIRED) != REQUIRED
    if kind == "bool":
        out.boolean = bool(value)
    elif kind in ("i8", "i16", "i32", "i64", "fp32", "fp64", "string", "binary"):
        setattr(out, kind, value)
    elif kind == "varchar":
        out.var_char.value = value
        out.var_char.length = t.varchar.length
    elif kind == "fixed_char":
        out.fixed_char = value
    elif kind == "date":
        out.date = (value - dt.date(1970, 1, 1)).days
    elif kind == "precision_timestamp":
        out.precision_timestamp.precision = 6
        out.precision_timestamp.value = (value - _EPOCH) // dt.timedelta(microseconds=1)
    elif kind == "precision_timestamp_tz":
        out.precision_timestamp_tz.precision = 6
        aware = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        out.precision_timestamp_tz.value = (aware - _EPOCH.replace(tzinfo=dt.UTC)) // dt.timedelta(microseconds=1)
    elif kind == "interval_day":
        td: dt.timedelta = value
        out.interval_day_to_second.days = td.days
        out.interval_day_to_second.seconds = td.seconds
        out.interval_day_to_second.precision = 6
        out.interval_day_to_second.subseconds = td.microseconds
    elif kind == "interval_year":
        years, months = value
        out.interval_year_to_month.years = years
        out.interval_year_to_month.months = months
    elif kind == "decimal":
        d = decimal.Decimal(value)
        exact = decimal.Context(prec=80)
        unscaled = int(d.scaleb(t.decimal.scale, exact).to_integral_exact(context=exact))
        out.decimal.value = unscaled.to_bytes(16, "little", signed=True)
        out.decimal.precision = t.decimal.precision
        out.decimal.scale = t.decimal.scale
    elif kind == "struct":
        out.struct.fields.extend(literal(v, ft) for v, ft in zip(value, t.struct.types, strict=True))
    elif kind == "list":
        if value:
            out.list.values.extend(literal(v, t.list.type) for v in value)
        else:
            out.empty_list.CopyFrom(t.list)
    elif kind == "map":
        if value:
            for k, v in value.items():
                kv = out.map.key_values.add()
                kv.key.CopyFrom(literal(k, t.map.key))
                kv.value.CopyFrom(literal(v, t.map.value))
        else:
            out.empty_map.CopyFrom(t.map)
    else:
        raise TypeError(f"literal of type {kind} not supported by the builder")
    return out


def lit(value: Any, type_: Type | None = None) -> Expr:
    return Expr(literal=literal(value, type_))


def param(anchor: int, type_: Type) -> Expr:
    """A dynamic parameter `$anchor` of the given type."""
    return Expr(dynamic_parameter=alg.DynamicParameter(type=type_, parameter_reference=anchor))


def bind(plan: plan_pb2.Plan, anchor: int, value: Any, type_: Type | None = None) -> plan_pb2.Plan:
    """Add `Plan.parameter_bindings`: the plan's own value for `$anchor`."""
    plan.parameter_bindings.add(parameter_anchor=anchor, value=literal(value, type_))
    return plan


def null(type_: Type) -> Expr:
    return lit(None, type_)


# --- field references --------------------------------------------------------------------------------------


def seg_field(i: int) -> Expr.ReferenceSegment:
    return Expr.ReferenceSegment(struct_field=Expr.ReferenceSegment.StructField(field=i))


def seg_elem(offset: int) -> Expr.ReferenceSegment:
    return Expr.ReferenceSegment(list_element=Expr.ReferenceSegment.ListElement(offset=offset))


def seg_key(key: Any, type_: Type | None = None) -> Expr.ReferenceSegment:
    return Expr.ReferenceSegment(map_key=Expr.ReferenceSegment.MapKey(map_key=literal(key, type_)))


def _chain(segments: Sequence[Expr.ReferenceSegment]) -> Expr.ReferenceSegment:
    """Link segments into one nested ReferenceSegment (each the child of the one before)."""
    copies = []
    for s in segments:
        c = Expr.ReferenceSegment()
        c.CopyFrom(s)
        copies.append(c)
    segments = copies
    for parent, child in zip(reversed(segments[:-1]), reversed(segments[1:]), strict=True):
        getattr(parent, parent.WhichOneof("reference_type")).child.CopyFrom(child)
    return segments[0]


def field(i: int, *children: Expr.ReferenceSegment) -> Expr:
    """A field of the input record; `children` walk into nested values (seg_field/seg_elem/seg_key)."""
    ref = Expr.FieldReference(direct_reference=_chain([seg_field(i), *children]))
    ref.root_reference.SetInParent()
    return Expr(selection=ref)


def outer(i: int, steps_out: int = 1) -> Expr:
    """A field of an enclosing query's record (an outer reference)."""
    ref = Expr.FieldReference(direct_reference=seg_field(i))
    ref.outer_reference.steps_out = steps_out
    return Expr(selection=ref)


def access(base: Expr, *segments: Expr.ReferenceSegment) -> Expr:
    """Nested access into the value of any expression."""
    ref = Expr.FieldReference(direct_reference=_chain(list(segments)))
    ref.expression.CopyFrom(base)
    return Expr(selection=ref)


# --- other expressions -------------------------------------------------------------------------------------


def cast(e: Expr, to: Type, throw: bool = False) -> Expr:
    behavior = Expr.Cast.FAILURE_BEHAVIOR_THROW_EXCEPTION if throw else Expr.Cast.FAILURE_BEHAVIOR_RETURN_NULL
    return Expr(cast=Expr.Cast(type=to, input=e, failure_behavior=behavior))


def if_then(clauses: Iterable[tuple[Expr, Expr]], else_: Expr | None = None) -> Expr:
    it = Expr.IfThen()
    for cond, then in clauses:
        clause = it.ifs.add()
        getattr(clause, "if").CopyFrom(cond)
        clause.then.CopyFrom(then)
    if else_ is not None:
        getattr(it, "else").CopyFrom(else_)
    return Expr(if_then=it)


def switch(match: Expr, clauses: Iterable[tuple[Any, Expr]], else_: Expr | None = None, type_=None) -> Expr:
    sw = Expr.SwitchExpression(match=match)
    for value, then in clauses:
        clause = sw.ifs.add()
        getattr(clause, "if").CopyFrom(literal(value, type_))
        clause.then.CopyFrom(then)
    if else_ is not None:
        getattr(sw, "else").CopyFrom(else_)
    return Expr(switch_expression=sw)


def in_list(value: Expr, *options: Expr) -> Expr:
    return Expr(singular_or_list=Expr.SingularOrList(value=value, options=list(options)))


def multi_in_list(values: Sequence[Expr], *records: Sequence[Expr]) -> Expr:
    m = Expr.MultiOrList(value=list(values))
    for rec in records:
        m.options.add().fields.extend(rec)
    return Expr(multi_or_list=m)


def make_struct(*fields: Expr) -> Expr:
    return Expr(nested=Expr.Nested(struct=Expr.Nested.Struct(fields=list(fields))))


def make_list(*values: Expr) -> Expr:
    return Expr(nested=Expr.Nested(list=Expr.Nested.List(values=list(values))))


def make_map(*pairs: tuple[Expr, Expr]) -> Expr:
    m = Expr.Nested.Map()
    for k, v in pairs:
        kv = m.key_values.add()
        kv.key.CopyFrom(k)
        kv.value.CopyFrom(v)
    return Expr(nested=Expr.Nested(map=m))


def scalar_subquery(rel: Rel) -> Expr:
    return Expr(subquery=Subquery(scalar=Subquery.Scalar(input=rel)))


def exists(rel: Rel) -> Expr:
    sp = Subquery.SetPredicate(predicate_op=Subquery.SetPredicate.PREDICATE_OP_EXISTS, tuples=rel)
    return Expr(subquery=Subquery(set_predicate=sp))


def in_subquery(needles: Sequence[Expr], haystack: Rel) -> Expr:
    pred = Subquery.InPredicate(needles=list(needles), haystack=haystack)
    return Expr(subquery=Subquery(in_predicate=pred))


_CMP_OPS = {
    "=": CMP.COMPARISON_OP_EQ,
    "<>": CMP.COMPARISON_OP_NE,
    "<": CMP.COMPARISON_OP_LT,
    ">": CMP.COMPARISON_OP_GT,
    "<=": CMP.COMPARISON_OP_LE,
    ">=": CMP.COMPARISON_OP_GE,
}


def set_comparison(left: Expr, op: str, reduction: str, right: Rel) -> Expr:
    """`left op ANY|ALL (right)`; op one of = <> < > <= >=."""
    red = CMP.REDUCTION_OP_ANY if reduction.upper() == "ANY" else CMP.REDUCTION_OP_ALL
    sc = CMP(reduction_op=red, comparison_op=_CMP_OPS[op], left=left, right=right)
    return Expr(subquery=Subquery(set_comparison=sc))


# --- relations ---------------------------------------------------------------------------------------------


def _nested_names(t: Type, prefix: str) -> list[str]:
    """Names a NamedStruct holds for the struct fields nested in a column, depth-first."""
    kind = t.WhichOneof("kind")
    if kind == "struct":
        out = []
        for i, ft in enumerate(t.struct.types):
            out.append(f"{prefix}_{i}")
            out.extend(_nested_names(ft, f"{prefix}_{i}"))
        return out
    if kind == "list":
        return _nested_names(t.list.type, prefix)
    if kind == "map":
        return _nested_names(t.map.key, prefix) + _nested_names(t.map.value, prefix)
    return []


def _schema(names: Sequence[str], types: Sequence[Type]) -> tp.NamedStruct:
    """Column names and types; a struct column's field names are made up (`<col>_0`, ...)."""
    flat = [n2 for n, t in zip(names, types, strict=True) for n2 in [n, *_nested_names(t, n)]]
    s = tp.NamedStruct(names=flat)
    s.struct.types.extend(types)
    s.struct.nullability = REQUIRED
    return s


def named(table: str | Sequence[str], names: Sequence[str], types: Sequence[Type]) -> Rel:
    parts = [table] if isinstance(table, str) else list(table)
    read = alg.ReadRel(base_schema=_schema(names, types))
    read.named_table.names.extend(parts)
    return Rel(read=read)


def virtual(names: Sequence[str], types: Sequence[Type], rows: Iterable[Sequence[Any]]) -> Rel:
    """A VirtualTable of Python rows (each value turned into a literal of its column's type)."""
    read = alg.ReadRel(base_schema=_schema(names, types))
    read.virtual_table.SetInParent()
    for row in rows:
        rec = read.virtual_table.expressions.add()
        rec.fields.extend(v if isinstance(v, Expr) else lit(v, t) for v, t in zip(row, types, strict=True))
    return Rel(read=read)


def _common(body: Any, emit: Sequence[int] | None) -> None:
    if emit is not None:
        body.common.emit.output_mapping.extend(emit)
    else:
        body.common.direct.SetInParent()


def with_emit(rel: Rel, mapping: Sequence[int]) -> Rel:
    """A copy of `rel` whose output is remapped by `emit` (positions of its direct output)."""
    out = Rel()
    out.CopyFrom(rel)
    body = getattr(out, out.WhichOneof("rel_type"))
    body.common.ClearField("emit_kind")
    body.common.emit.output_mapping.extend(mapping)
    return out


def filter_(input: Rel, condition: Expr, emit: Sequence[int] | None = None) -> Rel:
    body = alg.FilterRel(input=input, condition=condition)
    _common(body, emit)
    return Rel(filter=body)


def project(input: Rel, *expressions: Expr, emit: Sequence[int] | None = None) -> Rel:
    body = alg.ProjectRel(input=input, expressions=list(expressions))
    _common(body, emit)
    return Rel(project=body)


def join(
    left: Rel,
    right: Rel,
    type_: int,
    condition: Expr | None = None,
    post: Expr | None = None,
    emit: Sequence[int] | None = None,
) -> Rel:
    body = alg.JoinRel(left=left, right=right, type=type_)
    if condition is not None:
        body.expression.CopyFrom(condition)
    if post is not None:
        body.post_join_filter.CopyFrom(post)
    _common(body, emit)
    return Rel(join=body)


def cross(left: Rel, right: Rel, emit: Sequence[int] | None = None) -> Rel:
    body = alg.CrossRel(left=left, right=right)
    _common(body, emit)
    return Rel(cross=body)


def measure(fn: AggregateFunction, filter: Expr | None = None) -> alg.AggregateRel.Measure:
    m = alg.AggregateRel.Measure(measure=fn)
    if filter is not None:
        m.filter.CopyFrom(filter)
    return m


def aggregate(
    input: Rel,
    keys: Sequence[Expr] = (),
    sets: Sequence[Sequence[int]] | None = None,
    measures: Sequence[AggregateFunction | alg.AggregateRel.Measure] = (),
    emit: Sequence[int] | None = None,
) -> Rel:
    """An AggregateRel over grouping expressions `keys`; `sets` (default: one set of all keys) index them."""
    body = alg.AggregateRel(input=input, grouping_expressions=list(keys))
    if sets is None:
        sets = [list(range(len(keys)))] if keys else []
    for s in sets:
        body.groupings.add().expression_references.extend(s)
    for m in measures:
        body.measures.append(m if isinstance(m, alg.AggregateRel.Measure) else measure(m))
    _common(body, emit)
    return Rel(aggregate=body)


def sort(input: Rel, *fields: tuple[Expr, int], emit: Sequence[int] | None = None) -> Rel:
    body = alg.SortRel(input=input, sorts=[SortField(expr=e, direction=d) for e, d in fields])
    _common(body, emit)
    return Rel(sort=body)


def fetch(
    input: Rel,
    offset: int | None = None,
    count: int | None = None,
    count_expr: Expr | None = None,
    offset_expr: Expr | None = None,
) -> Rel:
    """`offset`/`count` as i64 literal expressions (count -1: all rows, no count)."""
    body = alg.FetchRel(input=input)
    if offset is not None:
        body.offset_expr.literal.i64 = offset
    if offset_expr is not None:
        body.offset_expr.CopyFrom(offset_expr)
    if count is not None and count != -1:
        body.count_expr.literal.i64 = count
    if count_expr is not None:
        body.count_expr.CopyFrom(count_expr)
    _common(body, None)
    return Rel(fetch=body)


def set_(op: int, *inputs: Rel) -> Rel:
    body = alg.SetRel(op=op, inputs=list(inputs))
    _common(body, None)
    return Rel(set=body)


def reference(ordinal: int) -> Rel:
    return Rel(reference=alg.ReferenceRel(subtree_ordinal=ordinal))


# --- writes, DDL, updates ------------------------------------------------------------------------------------

WriteRel = alg.WriteRel
DdlRel = alg.DdlRel


def write(
    table: str | Sequence[str],
    input: Rel,
    names: Sequence[str],
    types: Sequence[Type],
    op: int = WriteRel.WRITE_OP_INSERT,
    create_mode: int = WriteRel.CREATE_MODE_UNSPECIFIED,
    output: int = WriteRel.OUTPUT_MODE_NO_OUTPUT,
) -> Rel:
    """A WriteRel of `input` into a named table whose schema is `names`/`types`."""
    parts = [table] if isinstance(table, str) else list(table)
    body = WriteRel(input=input, table_schema=_schema(names, types), op=op, create_mode=create_mode, output=output)
    body.named_table.names.extend(parts)
    return Rel(write=body)


def ddl(
    table: str | Sequence[str],
    op: int,
    object_: int = DdlRel.DDL_OBJECT_TABLE,
    names: Sequence[str] = (),
    types: Sequence[Type] = (),
    view_definition: Rel | None = None,
) -> Rel:
    parts = [table] if isinstance(table, str) else list(table)
    body = DdlRel(op=op, object=object_)
    body.named_object.names.extend(parts)
    if names:
        body.table_schema.CopyFrom(_schema(names, types))
    if view_definition is not None:
        body.view_definition.CopyFrom(view_definition)
    return Rel(ddl=body)


def update(
    table: str | Sequence[str],
    names: Sequence[str],
    types: Sequence[Type],
    condition: Expr | None,
    transformations: dict[int, Expr],
) -> Rel:
    """An UpdateRel: `transformations` maps a column position to its new value's expression."""
    parts = [table] if isinstance(table, str) else list(table)
    body = alg.UpdateRel(table_schema=_schema(names, types))
    body.named_table.names.extend(parts)
    if condition is not None:
        body.condition.CopyFrom(condition)
    for target, e in transformations.items():
        body.transformations.add(column_target=target, transformation=e)
    return Rel(update=body)


# --- the plan ----------------------------------------------------------------------------------------------


class PlanBuilder:
    """Function declarations and the final Plan."""

    def __init__(self) -> None:
        self._urns: dict[str, int] = {}
        self._functions: dict[str, int] = {}
        self._decls: list[ext.SimpleExtensionDeclaration] = []
        self._urn_decls: list[ext.SimpleExtensionURN] = []

    def fn(self, name: str) -> int:
        """The anchor of function `name` (`add` or `add:i32_i32`), declared on first use."""
        if name in self._functions:
            return self._functions[name]
        family = _FAMILY.get(name.partition(":")[0], "arithmetic")
        urn = _URNS[family]
        if urn not in self._urns:
            self._urns[urn] = len(self._urns) + 1
            self._urn_decls.append(ext.SimpleExtensionURN(extension_urn_anchor=self._urns[urn], urn=urn))
        anchor = len(self._functions) + 1
        self._functions[name] = anchor
        decl = ext.SimpleExtensionDeclaration()
        decl.extension_function.extension_urn_reference = self._urns[urn]
        decl.extension_function.function_anchor = anchor
        decl.extension_function.name = name
        self._decls.append(decl)
        return anchor

    @staticmethod
    def _arguments(args: Sequence[Expr | str]) -> list[alg.FunctionArgument]:
        out = []
        for a in args:
            if isinstance(a, str):
                out.append(alg.FunctionArgument(enum=a))
            else:
                out.append(alg.FunctionArgument(value=a))
        return out

    @staticmethod
    def _options(options: dict[str, Sequence[str]] | None) -> list[alg.FunctionOption]:
        return [alg.FunctionOption(name=k, preference=list(v)) for k, v in (options or {}).items()]

    def call(
        self, name: str, *args: Expr | str, out: Type | None = None, options: dict[str, Sequence[str]] | None = None
    ) -> Expr:
        """A scalar function call; a `str` argument is an enum argument (e.g. extract's 'YEAR')."""
        fn = Expr.ScalarFunction(
            function_reference=self.fn(name), arguments=self._arguments(args), options=self._options(options)
        )
        if out is not None:
            fn.output_type.CopyFrom(out)
        return Expr(scalar_function=fn)

    def agg(
        self,
        name: str,
        *args: Expr,
        out: Type | None = None,
        distinct: bool = False,
        options: dict[str, Sequence[str]] | None = None,
    ) -> AggregateFunction:
        fn = AggregateFunction(
            function_reference=self.fn(name),
            arguments=self._arguments(args),
            options=self._options(options),
            phase=alg.AGGREGATION_PHASE_INITIAL_TO_RESULT,
            invocation=(
                AggregateFunction.AGGREGATION_INVOCATION_DISTINCT
                if distinct
                else AggregateFunction.AGGREGATION_INVOCATION_ALL
            ),
        )
        if out is not None:
            fn.output_type.CopyFrom(out)
        return fn

    # Shorthands for the boolean/comparison calls tests use everywhere.
    def eq(self, a: Expr, b: Expr) -> Expr:
        return self.call("equal", a, b, out=boolean())

    def and_(self, *args: Expr) -> Expr:
        return self.call("and", *args, out=boolean())

    def or_(self, *args: Expr) -> Expr:
        return self.call("or", *args, out=boolean())

    def not_(self, a: Expr) -> Expr:
        return self.call("not", a, out=boolean())

    def plan(
        self,
        root: Rel,
        names: Sequence[str],
        shared: Sequence[Rel] = (),
        more: Sequence[tuple[Rel, Sequence[str]]] = (),
    ) -> plan_pb2.Plan:
        """A plan whose `relations` are the `shared` subtrees (ordinals 0..), the root, then `more` roots."""
        p = plan_pb2.Plan()
        p.version.minor_number = 81
        p.version.producer = "tests/plan_builder"
        p.extension_urns.extend(self._urn_decls)
        p.extensions.extend(self._decls)
        for rel in shared:
            p.relations.add().rel.CopyFrom(rel)
        for rel, rel_names in [(root, names), *more]:
            r = p.relations.add().root
            r.input.CopyFrom(rel)
            r.names.extend(rel_names)
        return p


# --- running and comparing ---------------------------------------------------------------------------------


def run(plan: plan_pb2.Plan, spark, resolver=None):
    """The plan's root DataFrame (NamedTable reads resolve against Spark's catalog, e.g. temp views)."""
    from substrait_spark.consumer import to_dataframe
    from substrait_spark.consumer.running.resolver import SessionCatalogResolver

    return to_dataframe(plan, spark, resolver or SessionCatalogResolver())


def translation_refusal(plan: plan_pb2.Plan, spark, resolver=None):
    """The UnsupportedFeatureError translating the plan's first root raises (translation alone: no `validate`
    before it, unlike `run_plan`); fails the test if it translates."""
    import pytest
    from substrait_spark.consumer.errors import UnsupportedFeatureError
    from substrait_spark.consumer.running.resolver import SessionCatalogResolver
    from substrait_spark.consumer.translation.consumer import SubstraitConsumer

    consumer = SubstraitConsumer(spark, plan, resolver or SessionCatalogResolver())
    try:
        with pytest.raises(UnsupportedFeatureError) as exc:
            consumer.root(0)
    finally:
        consumer.close()
    return exc.value


def _key(value: Any) -> tuple:
    """A total order over mixed values with NULLs (for comparing results as multisets)."""
    if value is None:
        return (0, "")
    if isinstance(value, (list, tuple)):
        return (1, tuple(_key(v) for v in value))
    if isinstance(value, dict):
        return (1, tuple(sorted((_key(k), _key(v)) for k, v in value.items())))
    return (1, repr(type(value)), value)


def tuples(rows: Iterable[Any]) -> list[tuple]:
    """Rows (Spark Rows or tuples) as plain tuples, nested Rows as tuples too."""

    def plain(v: Any) -> Any:
        if isinstance(v, tuple):  # Row is a tuple
            return tuple(plain(x) for x in v)
        if isinstance(v, list):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        return v

    return [tuple(plain(x) for x in r) for r in rows]


def sorted_rows(rows: Iterable[Any]) -> list[tuple]:
    return sorted(tuples(rows), key=lambda r: tuple(_key(v) for v in r))


def assert_same_rows(got, expected, ordered: bool = False) -> None:
    """`got`/`expected`: DataFrames or row lists. Compared as multisets unless `ordered`."""
    g = tuples(got.collect() if hasattr(got, "collect") else got)
    e = tuples(expected.collect() if hasattr(expected, "collect") else expected)
    if not ordered:
        g, e = sorted_rows(g), sorted_rows(e)
    assert g == e, f"\n got:      {g}\n expected: {e}"


def _sql_literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float, decimal.Decimal)):
        return repr(value) if not isinstance(value, decimal.Decimal) else str(value)
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return f"DATE'{value.isoformat()}'"
    raise TypeError(f"no SQL literal for {value!r}")


@contextmanager
def views(spark, tables: Mapping[str, tuple[str, Sequence[Sequence[Any]]]]) -> Iterator[None]:
    """Register each `name: (ddl, rows)` of `tables` as a temp view (`view`) for the block, dropped after it: a
    test module's tables."""
    for name, (ddl, rows) in tables.items():
        view(spark, name, ddl, rows)
    try:
        yield
    finally:
        for name in tables:
            spark.catalog.dropTempView(name)


def view(spark, name: str, ddl: str, rows: Sequence[Sequence[Any]]) -> None:
    """Register `rows` (schema as DDL, e.g. 'k int, s string') as temp view `name`.

    Built from a SQL VALUES list (a local relation), not `createDataFrame` over Python objects, so that
    queries over it need no Python worker processes: much faster on a small local session.
    """
    cols = [c.strip().split(None, 1) for c in ddl.split(",")]
    select = ", ".join(f"CAST(col{i + 1} AS {t}) AS `{n}`" for i, (n, t) in enumerate(cols))
    if rows:
        values = ", ".join("(" + ", ".join(_sql_literal(v) for v in r) + ")" for r in rows)
        sql = f"SELECT {select} FROM VALUES {values}"
    else:
        nulls = ", ".join(f"CAST(NULL AS {t}) AS `{n}`" for n, t in cols)
        sql = f"SELECT {nulls} WHERE FALSE"
    spark.sql(sql).createOrReplaceTempView(name)
