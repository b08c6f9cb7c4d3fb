"""Null literals the producer left untyped, typed from where they stand.

The spec requires `Literal.null` to carry its type; DuckDB 1.1's substrait extension writes an empty one where
SQL's NULL has its type from its place: under a Cast (`CASE ... ELSE NULL` of a decimal or double column) and as
a column of a UNION ALL branch whose other branches fix the column's type. The loader writes in the type the
place fixes, once, so that validate, lineage, explain and run all see one typed plan:

- the input of a Cast: the Cast's target type;
- a branch (then/else) of an IfThen or a SwitchExpression: the type the plan states for another branch;
- a column of a set relation's input (a project's expression): the type the plan states for that column in
  another input.

A null whose place fixes no type (a bare NULL in a project, a branch next to branches of unstated type) stays as
written and is refused with its path (`types.spark_type`: "type has no kind set", exit 2).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

from google.protobuf.message import Message
from substrait import algebra_pb2 as alg
from substrait import type_pb2 as tp
from substrait.plan_pb2 import Plan

from ..errors import PlanInvalidError
from ..plan_visitor import JOIN_OUTPUT, JoinOutput
from ..walk import children, columns_of
from .producers import Quirks

Expression = alg.Expression
Literal = Expression.Literal
Types = list[tp.Type | None]  # a record's column types, None where the plan does not state one


class NullContext(StrEnum):
    """Where an untyped null took its type from (the load note names it)."""

    CAST = "a Cast's target"
    BRANCH = "another branch of its CASE"
    SET_COLUMN = "the same column of another set input"


def type_untyped_nulls(plan: Plan) -> list[str]:
    """Type, in place, every untyped null literal whose place fixes its type; notes for the run report."""
    typer = _Typer(Quirks.of(plan))
    for i, root in enumerate(plan.relations):
        kind = root.WhichOneof("rel_type")
        if kind == "root":
            typer.rel(root.root.input, f"relations[{i}].root.input")
        elif kind == "rel":
            typer.rel(root.rel, f"relations[{i}].rel")
    return [
        f"{len(paths)} untyped null literal(s) typed from {context} (first at {paths[0]})"
        for context, paths in typer.typed.items()
    ]


def untyped_null(e: Expression) -> bool:
    """A null literal with no type kind (what the spec does not allow and DuckDB 1.1 writes)."""
    return (
        e.WhichOneof("rex_type") == "literal"
        and e.literal.WhichOneof("literal_type") == "null"
        and e.literal.null.WhichOneof("kind") is None
    )


def _set_null_type(e: Expression, t: tp.Type) -> None:
    e.literal.null.CopyFrom(t)
    kind = t.WhichOneof("kind")
    body = getattr(e.literal.null, kind) if kind else None
    if body is not None and "nullability" in body.DESCRIPTOR.fields_by_name:
        body.nullability = tp.Type.NULLABILITY_NULLABLE


# --- stated types of literals and expressions ----------------------------------------------------------------

_SIMPLE_LITERALS = {
    "boolean": "bool", "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64", "fp32": "fp32", "fp64": "fp64",
    "string": "string", "binary": "binary", "date": "date", "uuid": "uuid", "interval_year_to_month": "interval_year",
}  # fmt: skip


def _literal_type(lit: Literal) -> tp.Type | None:
    kind = lit.WhichOneof("literal_type")
    out = tp.Type()
    if kind == "null":
        return lit.null if lit.null.WhichOneof("kind") else None
    if kind in _SIMPLE_LITERALS:
        getattr(out, _SIMPLE_LITERALS[kind]).SetInParent()
    elif kind == "decimal":
        out.decimal.precision, out.decimal.scale = lit.decimal.precision, lit.decimal.scale
    elif kind in ("precision_timestamp", "precision_timestamp_tz"):
        getattr(out, kind).precision = getattr(lit, kind).precision
    elif kind == "interval_day_to_second":
        out.interval_day.precision = lit.interval_day_to_second.precision
    elif kind == "var_char":
        out.varchar.length = lit.var_char.length
    elif kind == "fixed_char":
        out.fixed_char.length = len(lit.fixed_char)
    else:
        return None
    return out


def _selection_type(ref: Expression.FieldReference, scope: Types | None) -> tp.Type | None:
    seg = ref.direct_reference
    if scope is None or ref.WhichOneof("root_type") != "root_reference":
        return None
    if seg.WhichOneof("reference_type") != "struct_field" or seg.struct_field.HasField("child"):
        return None
    i = seg.struct_field.field
    return scope[i] if 0 <= i < len(scope) else None


def _branches(e: Expression) -> list[Expression]:
    """The value branches of an IfThen or SwitchExpression (then ..., else), [] for other expressions."""
    kind = e.WhichOneof("rex_type")
    if kind not in ("if_then", "switch_expression"):
        return []
    body = getattr(e, kind)
    return [c.then for c in body.ifs] + ([getattr(body, "else")] if body.HasField("else") else [])


def stated_type(e: Expression, scope: Types | None) -> tp.Type | None:
    """The type the plan states for an expression's value (None where it states none): a literal's, a Cast's
    target, a function's output type, a column's in `scope`, a CASE's first branch of stated type."""
    kind = e.WhichOneof("rex_type")
    if kind == "literal":
        return _literal_type(e.literal)
    if kind == "cast":
        return e.cast.type if e.cast.type.WhichOneof("kind") else None
    if kind in ("scalar_function", "window_function"):
        fn = getattr(e, kind)
        return fn.output_type if fn.output_type.WhichOneof("kind") else None
    if kind == "selection":
        return _selection_type(e.selection, scope)
    return next((t for b in _branches(e) if (t := stated_type(b, scope)) is not None), None)


# --- the walk ------------------------------------------------------------------------------------------------


class _Typer:
    """Types untyped nulls bottom-up (inner relations and expressions first, so a null typed below informs the
    places above it) and computes each relation's output types where the plan states them."""

    def __init__(self, quirks: Quirks):
        self.quirks = quirks
        self.typed: dict[NullContext, list[str]] = {}

    def note(self, context: NullContext, path: str) -> None:
        self.typed.setdefault(context, []).append(path)

    def rel(self, rel: alg.Rel, path: str) -> Types | None:
        kind = rel.WhichOneof("rel_type")
        if kind is None:
            return None
        body = getattr(rel, kind)
        p = f"{path}.{kind}"
        inputs = [self.rel(child, cp) for child, cp in children(body, p) if isinstance(child, alg.Rel)]
        scope = _concat(inputs)
        for child, cp in children(body, p):
            if not isinstance(child, alg.Rel):
                self.visit(child, cp, scope)
        if kind == "set":
            self.set_columns(rel.set, p, inputs)
        return _emitted(body, _OUTPUTS.get(kind, _unknown)(self, body, inputs))

    def visit(self, msg: Message, path: str, scope: Types | None) -> None:
        """Expressions under `msg` (a relation's own field), inner first; a subquery's relations have their own
        scope."""
        if isinstance(msg, alg.Rel):
            self.rel(msg, path)
            return
        for child, cp in children(msg, path):
            self.visit(child, cp, scope)
        if isinstance(msg, Expression):
            self.expression(msg, path, scope)

    def expression(self, e: Expression, path: str, scope: Types | None) -> None:
        kind = e.WhichOneof("rex_type")
        if kind == "cast" and untyped_null(e.cast.input) and e.cast.type.WhichOneof("kind"):
            _set_null_type(e.cast.input, e.cast.type)
            self.note(NullContext.CAST, f"{path}.cast.input.literal.null")
            return
        branches = _branches(e)
        untyped = [b for b in branches if untyped_null(b)]
        if not untyped:
            return
        t = next((t for b in branches if (t := stated_type(b, scope)) is not None), None)
        if t is not None:
            for b in untyped:
                _set_null_type(b, t)
            self.note(NullContext.BRANCH, f"{path}.{kind}")

    def set_columns(self, rel: alg.SetRel, path: str, inputs: list[Types | None]) -> None:
        """A set input's column that is an untyped null takes the column's type in another input (`inputs`, the
        inputs' output types, is brought up to date)."""
        for k, source in enumerate(rel.inputs):
            changed = False
            for j, e in self.project_columns(source):
                t = next((c[j] for c in inputs if c is not None and j < len(c) and c[j] is not None), None)
                if t is not None and untyped_null(e):
                    _set_null_type(e, t)
                    self.note(NullContext.SET_COLUMN, f"{path}.inputs[{k}].project")
                    changed = True
            if changed:
                inputs[k] = self.rel_types(source)

    def rel_types(self, rel: alg.Rel) -> Types | None:
        """A relation's output types, without typing anything (its nulls are typed already)."""
        kind = rel.WhichOneof("rel_type")
        if kind is None:
            return None
        body = getattr(rel, kind)
        inputs = [self.rel_types(child) for child, _ in children(body, "") if isinstance(child, alg.Rel)]
        return _emitted(body, _OUTPUTS.get(kind, _unknown)(self, body, inputs))

    def project_columns(self, rel: alg.Rel) -> list[tuple[int, Expression]]:
        """(output column, expression) of a project relation's expression columns; [] for other relations."""
        if rel.WhichOneof("rel_type") != "project":
            return []
        body = rel.project
        if self.quirks.project_outputs_expressions_only:
            width = 0
        else:
            source = self.rel_types(body.input)
            if source is None:
                return []
            width = len(source)
        total = width + len(body.expressions)
        mapping = _emitted(body, list(range(total))) or []
        return [(j, body.expressions[m - width]) for j, m in enumerate(mapping) if m >= width]


def _emitted(body: Any, out: list[Any] | None) -> list[Any] | None:
    """`out` through the relation's emit; None when unknown or the emit does not fit it (the stages that read the
    relation report a bad emit, not the loader)."""
    common = getattr(body, "common", None)
    if out is None or common is None or common.WhichOneof("emit_kind") != "emit":
        return out
    mapping = common.emit.output_mapping
    return [out[m] for m in mapping] if all(0 <= m < len(out) for m in mapping) else None


def _concat(inputs: list[Types | None]) -> Types | None:
    if any(i is None for i in inputs):
        return None
    return [t for i in inputs for t in (i or [])]


# --- output types per relation (before its emit) ---------------------------------------------------------------

Output = Callable[[_Typer, Any, list["Types | None"]], "Types | None"]


def _unknown(typer: _Typer, body: Any, inputs: list[Types | None]) -> Types | None:
    return None


def _same(typer: _Typer, body: Any, inputs: list[Types | None]) -> Types | None:
    return inputs[0] if inputs else None


def _read(typer: _Typer, body: alg.ReadRel, inputs: list[Types | None]) -> Types | None:
    if not body.base_schema.struct.types:
        return None  # DataFusion 40's names-only schema (Quirks.untyped_base_schema): typed by the table
    try:
        columns: Types = [t for _, t in columns_of(body.base_schema, "base_schema")]
    except PlanInvalidError:
        return None  # reported by the stages that read the schema
    if not body.HasField("projection"):
        return columns
    items = body.projection.select.struct_items  # the columns the read outputs (DuckDB writes one)
    if any(i.HasField("child") or not 0 <= i.field < len(columns) for i in items):
        return None
    return [columns[i.field] for i in items]


def _project(typer: _Typer, body: alg.ProjectRel, inputs: list[Types | None]) -> Types | None:
    if typer.quirks.project_outputs_expressions_only:
        source: Types | None = []
    else:
        source = inputs[0] if inputs else None
    if source is None:
        return None
    return [*source, *(stated_type(e, inputs[0] if inputs else None) for e in body.expressions)]


def _aggregate(typer: _Typer, body: alg.AggregateRel, inputs: list[Types | None]) -> Types | None:
    rel = typer.quirks.as_written(body)
    scope = inputs[0] if inputs else None
    keys: Types = [stated_type(e, scope) for e in rel.grouping_expressions]
    measures: Types = [m.measure.output_type if m.measure.HasField("output_type") else None for m in rel.measures]
    if len(rel.groupings) <= 1:
        return [*keys, *measures]
    index: Types = [None]  # the grouping-set column (its integer width is the consumer's)
    return [*keys, *index, *measures] if typer.quirks.grouping_index_first(body) else [*keys, *measures, *index]


_MARK = tp.Type(bool=tp.Type.Boolean(nullability=tp.Type.NULLABILITY_NULLABLE))
_JOINED: dict[JoinOutput, Callable[[Types, Types], Types]] = {
    JoinOutput.BOTH: lambda left, right: [*left, *right],
    JoinOutput.LEFT: lambda left, right: left,
    JoinOutput.RIGHT: lambda left, right: right,
    JoinOutput.LEFT_MARK: lambda left, right: [*left, _MARK],
    JoinOutput.RIGHT_MARK: lambda left, right: [*right, _MARK],
}


def _join(typer: _Typer, body: alg.JoinRel, inputs: list[Types | None]) -> Types | None:
    output = JOIN_OUTPUT.get(body.type)
    if output is None or len(inputs) != 2 or inputs[0] is None or inputs[1] is None:
        return None
    return _JOINED[output](inputs[0], inputs[1])


def _cross(typer: _Typer, body: alg.CrossRel, inputs: list[Types | None]) -> Types | None:
    return _concat(inputs)


def _set(typer: _Typer, body: alg.SetRel, inputs: list[Types | None]) -> Types | None:
    known = [i for i in inputs if i is not None]
    if not known:
        return None
    return [next((i[j] for i in known if j < len(i) and i[j] is not None), None) for j in range(len(known[0]))]


def _window(typer: _Typer, body: alg.ConsistentPartitionWindowRel, inputs: list[Types | None]) -> Types | None:
    source = inputs[0] if inputs else None
    if source is None:
        return None
    return [*source, *(fn.output_type if fn.HasField("output_type") else None for fn in body.window_functions)]


_OUTPUTS: dict[str, Output] = {
    "read": _read,
    "filter": _same,
    "fetch": _same,
    "sort": _same,
    "exchange": _same,
    "project": _project,
    "aggregate": _aggregate,
    "join": _join,
    "cross": _cross,
    "set": _set,
    "window": _window,
}
