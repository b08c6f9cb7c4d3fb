"""`substrait-spark explain`: a plan as an indented tree, one line per relation, with its output schema.

Each line holds the relation kind, its key details (table read, join type, expressions, measures, sort keys,
fetch bounds, emit) and the column types it outputs, derived statically from the plan (base schemas, function
output types, casts) in Substrait notation: `i32?` is a nullable i32, `decimal<15,2>*4` four such columns in
a row, `?` a type the plan does not state. Subquery bodies appear under the relation whose expression holds
them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, cast

from google.protobuf.message import Message
from substrait import algebra_pb2 as alg
from substrait import type_pb2 as tp

from ..loading.extensions import Extensions
from ..loading.producers import Quirks
from ..plan_visitor import (
    DETACHED,
    JOIN_OUTPUT,
    KINDS,
    SUBQUERY_LABEL,
    JoinOutput,
    KindTable,
    PlanVisitor,
    logical_join_type,
    register,
    subquery_body,
    subquery_relations,
)
from ..records import TableRead
from ..translation.functions import PREDICATES
from ..type_text import UNKNOWN, literal_type, type_str
from ..types import PlanTypes
from ..walk import children, value_args

if TYPE_CHECKING:
    from ..translation.consumer import SubstraitConsumer

Expression = alg.Expression
Subquery = Expression.Subquery
JoinRel = alg.JoinRel

INDENT = "  "
MAX_EXPR_CHARS = 90
MAX_SCHEMA_CHARS = 120
BOOLEAN = "boolean"

# Relation kinds with a left and a right input (the physical joins number their join types differently).
_JOINS = ("join", "cross", "lateral_join", "hash_join", "merge_join", "nested_loop_join")
# What explain shows as `?`: relations whose output it does not derive from the plan alone, expressions whose
# type it does not derive, field references into what it does not track (the kinds test holds these tables; the
# kinds it derives are PlanTree's handlers).
SCHEMA_NOT_DERIVED = {
    **dict.fromkeys(("extension_single", "extension_multi", "extension_leaf"), "an extension's output is its own"),
    **dict.fromkeys(("write", "ddl", "update"), "a step's output is its row count, known when it runs"),
    "detached_rel_ordinal": DETACHED,
}
TYPE_NOT_DERIVED = {
    **dict.fromkeys(("dynamic_parameter", "lambda", "lambda_invocation", "named_lambda_reference"), "not derived"),
    "detached_expression_ordinal": DETACHED,
}
_CONTEXT_TYPES = {"current_date": "date", "current_timezone": "string", "current_timestamp": "precision_timestamp_tz"}


_SORT_DIRECTIONS = {
    alg.SortField.SORT_DIRECTION_ASC_NULLS_FIRST: "ASC NULLS FIRST",
    alg.SortField.SORT_DIRECTION_ASC_NULLS_LAST: "ASC NULLS LAST",
    alg.SortField.SORT_DIRECTION_DESC_NULLS_FIRST: "DESC NULLS FIRST",
    alg.SortField.SORT_DIRECTION_DESC_NULLS_LAST: "DESC NULLS LAST",
    alg.SortField.SORT_DIRECTION_CLUSTERED: "CLUSTERED",
}

# --- types -------------------------------------------------------------------------------------------------


def schema_str(types: list[str]) -> str:
    """Column types, runs of one type shortened, long lists clipped: `(i32?*4, decimal<15,2>?*2, date)`."""
    runs: list[tuple[str, int]] = []
    for t in types:
        if runs and runs[-1][0] == t:
            runs[-1] = (t, runs[-1][1] + 1)
        else:
            runs.append((t, 1))
    text = ", ".join(t if n == 1 else f"{t}*{n}" for t, n in runs)
    if len(text) > MAX_SCHEMA_CHARS:
        text = text[: MAX_SCHEMA_CHARS - 1].rsplit(", ", 1)[0] + ", …"
    return f"({text})" if len(types) <= 1 else f"{len(types)} columns ({text})"


# --- the tree ----------------------------------------------------------------------------------------------


# The record an expression's type is read against: its own columns' types, and the enclosing queries' records.
Record = tuple[list[str], list[list[str]]]
_SCHEMA_HANDLERS: dict[str, str] = {
    "read": "_schema_read",
    **dict.fromkeys(("filter", "sort", "fetch", "top_n", "exchange"), "_schema_of_input"),
    "expand": "_schema_expand",
    "project": "_schema_project",
    "aggregate": "_schema_aggregate",
    "window": "_schema_window",
    **dict.fromkeys(_JOINS, "_schema_join"),
    "set": "_schema_set",
    "reference": "_schema_reference",
}
_TYPE_HANDLERS: dict[str, str] = {
    "literal": "_type_literal",
    "selection": "_type_selection",
    **dict.fromkeys(("scalar_function", "window_function"), "_type_function"),
    "cast": "_type_cast",
    **dict.fromkeys(("if_then", "switch_expression"), "_type_conditional"),
    **dict.fromkeys(("singular_or_list", "multi_or_list"), "_type_boolean"),
    "subquery": "_type_subquery",
    "nested": "_type_nested",
    "execution_context_variable": "_type_context_variable",
}


class PlanTree(PlanVisitor[list[str]]):
    """Builds the text of `plan_tree`. A relation's output schema is derived by the walk all readers share
    (`PlanVisitor`: one handler per relation kind, then its emit; kinds it does not derive are `?`), once per
    relation path; an expression's type likewise by kind."""

    reader = "explain"
    relation_handlers = _SCHEMA_HANDLERS
    refused_relations = SCHEMA_NOT_DERIVED
    expression_handlers = _TYPE_HANDLERS
    refused_expressions = TYPE_NOT_DERIVED

    def __init__(self, plan: Any, extensions: Extensions, quirks: Quirks, tables_read: list[TableRead]):
        self.plan = plan
        self.functions = extensions.functions
        self.quirks = quirks
        self.tables = {t.name.lower(): t for t in tables_read}
        self.lines: list[str] = []
        self._schemas: dict[str, list[str]] = {}

    # -- text

    def render(self) -> str:
        with PlanTypes.of(self.plan).active():
            return self._render()

    def _render(self) -> str:
        for i, prel in enumerate(self.plan.relations):
            kind = prel.WhichOneof("rel_type")
            if kind == "root":
                names = ", ".join(prel.root.names)
                self.lines.append(f"root relations[{i}]  names=[{_clip(names)}]")
                self.outline(prel.root.input, f"relations[{i}].root.input", 1, [])
            elif kind == "rel":
                self.lines.append(f"shared relation relations[{i}]")
                self.outline(prel.rel, f"relations[{i}].rel", 1, [])
        return "\n".join(self.lines)

    def outline(
        self, rel: alg.Rel, path: str, depth: int, outer: list[list[str]], parent: Any = None, label: str = ""
    ) -> None:
        """The walk of explain's outline (the text, the picture, validate's records): each relation (`shape`),
        then its inputs one level deeper, then its subqueries' bodies, which see its record as their outer one.
        `shape` returns what its inputs and subqueries hang from (`parent`); `label` names a subquery."""
        kind = rel.WhichOneof("rel_type")
        if kind is None:
            self.shape(rel, None, None, path, depth, outer, parent, label)
            return
        body, p = getattr(rel, kind), f"{path}.{kind}"
        me = self.shape(rel, kind, body, path, depth, outer, parent, label)
        for child, cpath in _inputs(body, p):
            self.outline(child, cpath, depth + 1, outer, me)
        record = self.record_of(body, kind, p, outer)
        for sub, spath, sublabel in subquery_inputs(body, p):
            self.outline(sub, spath, depth + 1, [record, *outer], me, sublabel)

    def shape(
        self, rel: alg.Rel, kind: str | None, body: Any, path: str, depth: int, outer: list[list[str]], parent: Any,
        label: str,
    ) -> Any:  # fmt: skip
        """The relation's line (kind, details, emit, schema)."""
        pad = INDENT * depth + (f"[{label}] " if label else "")
        if kind is None:
            self.lines.append(f"{pad}(relation with no type set)")
            return None
        details = getattr(self, f"_details_{kind}", lambda b, p: "")(body, f"{path}.{kind}")
        text = " ".join(x for x in (kind, details, self._emit(body)) if x)
        self.lines.append(f"{pad}{text}  -> {schema_str(self.schema(rel, path, outer))}")
        return None

    def record_of(self, body: Any, kind: str, p: str, outer: list[list[str]]) -> list[str]:
        """The record a relation's subqueries see as their outer one (`_record`)."""
        return self._record(body, kind, p, outer)

    def _emit(self, body: Any) -> str:
        common = getattr(body, "common", None)
        if common is not None and common.WhichOneof("emit_kind") == "emit":
            return f"emit={list(common.emit.output_mapping)}"
        return ""

    def _details_read(self, r: alg.ReadRel, path: str) -> str:
        kind = r.WhichOneof("read_type")
        parts: list[str] = [kind or "(no source)"]
        if kind == "named_table":
            name = ".".join(r.named_table.names)
            parts.append(name)
            found = self.tables.get(name.lower())
            if found:
                parts.append(f"[{found.identity}, {found.format}]")
        elif kind == "virtual_table":
            parts.append(f"rows={len(r.virtual_table.expressions)}")
        elif kind == "local_files":
            items = r.local_files.items
            formats = sorted({i.WhichOneof("file_format") or "?" for i in items})
            parts.append(f"files={len(items)} format={','.join(formats)}")
        elif kind == "extension_table":
            parts.append(r.extension_table.detail.type_url)
        elif kind == "iceberg_table":
            parts.append(r.iceberg_table.direct.metadata_uri)
        if r.HasField("filter"):
            parts.append(f"filter={self.expr(r.filter)}")
        if r.HasField("best_effort_filter"):
            parts.append(f"best_effort_filter={self.expr(r.best_effort_filter)}")
        if r.HasField("projection"):
            parts.append(f"projection={[i.field for i in r.projection.select.struct_items]}")
        return " ".join(parts)

    def _details_filter(self, r: alg.FilterRel, path: str) -> str:
        return f"condition={self.expr(r.condition)}" if r.HasField("condition") else ""

    def _details_project(self, r: alg.ProjectRel, path: str) -> str:
        exprs = ", ".join(self.expr(e) for e in r.expressions)
        return f"expressions={len(r.expressions)} [{_clip(exprs)}]"

    def _details_aggregate(self, r: alg.AggregateRel, path: str) -> str:
        keys = [self.expr(e) for e in r.grouping_expressions]
        measures = [self._measure(m) for m in r.measures]
        parts = [f"keys={len(_key_exprs(r))}"]
        if len(r.groupings) > 1:
            parts.append(f"grouping_sets={len(r.groupings)}")
        if keys:
            parts.append(f"[{_clip(', '.join(dict.fromkeys(keys)))}]")
        parts.append(f"measures={len(measures)}")
        if measures:
            parts.append(f"[{_clip(', '.join(measures))}]")
        return " ".join(parts)

    def _measure(self, m: alg.AggregateRel.Measure) -> str:
        fn = m.measure
        args = [self.expr(a.value) for a in fn.arguments if a.WhichOneof("arg_type") == "value"]
        distinct = "DISTINCT " if fn.invocation == alg.AggregateFunction.AGGREGATION_INVOCATION_DISTINCT else ""
        text = f"{self._fname(fn.function_reference)}({distinct}{', '.join(args)})"
        return text + (f" FILTER {self.expr(m.filter)}" if m.HasField("filter") else "")

    def _details_window(self, r: alg.ConsistentPartitionWindowRel, path: str) -> str:
        fns = []
        for fn in r.window_functions:
            args = [self.expr(a.value) for a in fn.arguments if a.WhichOneof("arg_type") == "value"]
            distinct = "DISTINCT " if fn.invocation == alg.AggregateFunction.AGGREGATION_INVOCATION_DISTINCT else ""
            fns.append(f"{self._fname(fn.function_reference)}({distinct}{', '.join(args)})")
        keys = [f"{self.expr(s.expr)} {_SORT_DIRECTIONS.get(s.direction, 'custom')}" for s in r.sorts]
        parts = [f"partitions={len(r.partition_expressions)}"]
        if len(r.partition_expressions):
            parts.append(f"[{_clip(', '.join(self.expr(e) for e in r.partition_expressions))}]")
        parts.append(f"sorts={len(keys)}")
        if keys:
            parts.append(f"[{_clip(', '.join(keys))}]")
        return " ".join([*parts, f"functions={len(fns)}", f"[{_clip(', '.join(fns))}]"])

    def _details_sort(self, r: alg.SortRel, path: str) -> str:
        keys = [f"{self.expr(s.expr)} {_SORT_DIRECTIONS.get(s.direction, 'custom')}" for s in r.sorts]
        return f"keys={len(keys)} [{_clip(', '.join(keys))}]"

    def _details_fetch(self, r: alg.FetchRel, path: str) -> str:
        parts = []
        if r.HasField("offset_expr"):
            parts.append(f"offset={self.expr(r.offset_expr)}")
        if r.HasField("count_expr"):
            parts.append(f"count={self.expr(r.count_expr)}")
        return " ".join(parts) or "count=all"

    def _details_keyed_join(self, r: Any, path: str) -> str:
        """A hash or merge join: its type, then `left=right` per key (`<=>` for IS_NOT_DISTINCT_FROM)."""
        jt = logical_join_type(r)
        parts = [_join_type_name(jt)]
        ops = {alg.ComparisonJoinKey.SIMPLE_COMPARISON_TYPE_IS_NOT_DISTINCT_FROM: "<=>"}
        keys = [
            f"${k.left.direct_reference.struct_field.field}{ops.get(k.comparison.simple, '=')}"
            f"${k.right.direct_reference.struct_field.field}"
            for k in r.keys
        ]
        parts.append(f"keys=[{', '.join(keys)}]")
        for name in ("residual_expression", "post_join_filter"):
            if r.HasField(name):
                parts.append(f"{name}={self.expr(getattr(r, name))}")
        return " ".join(parts)

    _details_hash_join = _details_keyed_join
    _details_merge_join = _details_keyed_join

    def _details_nested_loop_join(self, r: alg.NestedLoopJoinRel, path: str) -> str:
        jt = logical_join_type(r)
        on = f" on={self.expr(r.expression)}" if r.HasField("expression") else ""
        return _join_type_name(jt) + on

    def _details_top_n(self, r: alg.TopNRel, path: str) -> str:
        keys = [self.expr(s.expr) for s in r.sorts]
        bounds = " ".join(f"{f}={self.expr(getattr(r, f))}" for f in ("offset", "count") if r.HasField(f))
        mode = alg.FetchMode.Name(r.mode).removeprefix("FETCH_MODE_")
        return f"keys=[{_clip(', '.join(keys))}] {bounds} {mode}".strip()

    def _details_exchange(self, r: alg.ExchangeRel, path: str) -> str:
        count = f" partitions={r.partition_count}" if r.partition_count else ""
        return f"{r.WhichOneof('exchange_kind') or '?'}{count}"

    def _details_expand(self, r: alg.ExpandRel, path: str) -> str:
        copies = max((len(f.switching_field.duplicates) for f in r.fields), default=1)
        return f"fields={len(r.fields)} copies={copies}"

    def _details_join(self, r: JoinRel, path: str) -> str:
        parts = [_join_type_name(r.type)]
        if r.HasField("expression"):
            parts.append(f"on={self.expr(r.expression)}")
        if r.HasField("post_join_filter"):
            parts.append(f"post_join_filter={self.expr(r.post_join_filter)}")
        return " ".join(parts)

    def _details_set(self, r: alg.SetRel, path: str) -> str:
        op = alg.SetRel.SetOp.Name(r.op).removeprefix("SET_OP_") if r.op in alg.SetRel.SetOp.values() else r.op
        return f"{op} inputs={len(r.inputs)}"

    def _details_reference(self, r: alg.ReferenceRel, path: str) -> str:
        return f"relations[{r.subtree_ordinal}]"

    def _details_extension_single(self, r: Any, path: str) -> str:
        return r.detail.type_url

    _details_extension_multi = _details_extension_single
    _details_extension_leaf = _details_extension_single
    _details_lateral_join = _details_join

    # -- schemas (the walk of `PlanVisitor`: one handler per relation kind, then the relation's emit)

    def schema(self, rel: alg.Rel, path: str, outer: list[list[str]]) -> list[str]:
        """The column types a relation outputs (computed once per path)."""
        if path not in self._schemas:
            self._schemas[path] = [] if rel.WhichOneof("rel_type") is None else self.rel(rel, path, outer)
        return self._schemas[path]

    def refused(self, what: str, kind: str, reason: str | None, path: str) -> Callable[..., Any]:
        """A kind whose output (or type) explain does not derive is shown as `?`, not refused."""
        return lambda *args: [UNKNOWN] if what == "relation" else UNKNOWN

    def emit(self, kind: str, body: Any, out: list[str], path: str) -> list[str]:
        common = getattr(body, "common", None)
        if common is not None and common.WhichOneof("emit_kind") == "emit":
            return [out[i] if 0 <= i < len(out) else UNKNOWN for i in common.emit.output_mapping]
        return out

    def _schema_read(self, body: alg.ReadRel, p: str, outer: list[list[str]]) -> list[str]:
        cols = [type_str(t) for t in body.base_schema.struct.types]
        if body.HasField("projection"):
            cols = [cols[i.field] if i.field < len(cols) else UNKNOWN for i in body.projection.select.struct_items]
        return cols

    def _schema_of_input(self, body: Any, p: str, outer: list[list[str]]) -> list[str]:
        """A relation that outputs its input's columns (a filter, sort, fetch, top-N, exchange)."""
        return self.schema(body.input, f"{p}.input", outer)

    def _schema_expand(self, body: alg.ExpandRel, p: str, outer: list[list[str]]) -> list[str]:
        return self._expand_columns(body, p, outer)

    def _schema_project(self, body: alg.ProjectRel, p: str, outer: list[list[str]]) -> list[str]:
        source = self.schema(body.input, f"{p}.input", outer)
        exprs = [self.expr_type(e, source, outer) for e in body.expressions]
        return exprs if self.quirks.project_outputs_expressions_only else [*source, *exprs]

    def _schema_aggregate(self, body: alg.AggregateRel, p: str, outer: list[list[str]]) -> list[str]:
        source = self.schema(body.input, f"{p}.input", outer)
        keys = [self.expr_type(e, source, outer) for e in _key_exprs(body)]
        measures = [self._measure_type(m, source, outer) for m in body.measures]
        return [*keys, *measures, *(["i32"] if len(body.groupings) > 1 else [])]

    def _schema_window(self, body: alg.ConsistentPartitionWindowRel, p: str, outer: list[list[str]]) -> list[str]:
        source = self.schema(body.input, f"{p}.input", outer)
        return [*source, *(self._function_type(fn, source, outer) for fn in body.window_functions)]

    def _schema_join(self, body: Any, p: str, outer: list[list[str]]) -> list[str]:
        """Any join: the layout of its (logical) join type (`plan_visitor.JOIN_OUTPUT`)."""
        left = self.schema(body.left, f"{p}.left", outer)
        right = self.schema(body.right, f"{p}.right", outer)
        output = JOIN_OUTPUT.get(logical_join_type(body), JoinOutput.BOTH)
        return {
            JoinOutput.BOTH: [*left, *right],
            JoinOutput.LEFT: left,
            JoinOutput.RIGHT: right,
            JoinOutput.LEFT_MARK: [*left, BOOLEAN + "?"],
            JoinOutput.RIGHT_MARK: [*right, BOOLEAN + "?"],
        }[output]

    def _schema_set(self, body: alg.SetRel, p: str, outer: list[list[str]]) -> list[str]:
        return self.schema(body.inputs[0], f"{p}.inputs[0]", outer) if body.inputs else []

    def _schema_reference(self, body: alg.ReferenceRel, p: str, outer: list[list[str]]) -> list[str]:
        i = body.subtree_ordinal
        if 0 <= i < len(self.plan.relations) and self.plan.relations[i].WhichOneof("rel_type") == "rel":
            return self.schema(self.plan.relations[i].rel, f"relations[{i}].rel", [])
        return [UNKNOWN]

    def _record(self, body: Any, kind: str, p: str, outer: list[list[str]]) -> list[str]:
        """The record the relation's own expressions see (what a subquery's outer reference reaches)."""
        if kind == "read":
            return [type_str(t) for t in body.base_schema.struct.types]
        if kind in _JOINS:
            return [
                *self.schema(body.left, f"{p}.left", outer),
                *self.schema(body.right, f"{p}.right", outer),
            ]
        if hasattr(body, "input"):
            return self.schema(body.input, f"{p}.input", outer)
        return []

    def _expand_columns(self, body: alg.ExpandRel, p: str, outer: list[list[str]]) -> list[str]:
        """Each field's type (a switching field's first duplicate's), the input columns past them, the ordinal."""
        source = self.schema(body.input, f"{p}.input", outer)
        cols = []
        for f in body.fields:
            if f.WhichOneof("field_type") == "consistent_field":
                cols.append(self.expr_type(f.consistent_field, source, outer))
            else:
                dups = f.switching_field.duplicates
                cols.append(self.expr_type(dups[0], source, outer) if dups else UNKNOWN)
        return [*cols, *source[len(cols) :], "i64"]

    def _measure_type(self, m: alg.AggregateRel.Measure, cols: list[str], outer: list[list[str]]) -> str:
        return self._function_type(m.measure, cols, outer)

    def _function_type(self, fn: Any, cols: list[str], outer: list[list[str]]) -> str:
        """An aggregate or window function's result: its output type, else its first argument's."""
        if fn.HasField("output_type"):
            return type_str(fn.output_type)
        values = value_args(fn)
        return self.expr_type(values[0], cols, outer) if values else "i64"

    def expr_type(self, e: Expression, cols: list[str], outer: list[list[str]]) -> str:
        """An expression's type over a record of `cols` (and the records of enclosing queries, `outer`)."""
        if e.WhichOneof("rex_type") is None:
            return UNKNOWN
        return self.expression(e, (cols, outer), "")

    def _type_literal(self, lit: Expression.Literal, scope: Record, path: str) -> str:
        return literal_type(lit)

    def _type_selection(self, ref: Expression.FieldReference, scope: Record, path: str) -> str:
        return self._selection_type(ref, *scope)

    def _type_function(self, fn: Any, scope: Record, path: str) -> str:
        """A scalar or window function: its output type, boolean for a predicate, else its first argument's."""
        if fn.HasField("output_type"):
            return type_str(fn.output_type)
        if self._fname(fn.function_reference) in PREDICATES:
            return BOOLEAN
        values = value_args(fn)
        return self.expr_type(values[0], *scope) if values else UNKNOWN

    def _type_cast(self, c: Expression.Cast, scope: Record, path: str) -> str:
        return type_str(c.type)

    def _type_conditional(self, e: Any, scope: Record, path: str) -> str:
        """IF/THEN or a switch: its first branch's (a simple CASE's operand clause, `Quirks.case_operand`, has none)."""
        then = next((c.then for c in e.ifs if c.HasField("then")), None)
        return self.expr_type(then, *scope) if then is not None else UNKNOWN

    def _type_boolean(self, e: Any, scope: Record, path: str) -> str:
        return BOOLEAN

    def _type_subquery(self, sq: Subquery, scope: Record, path: str) -> str:
        """A scalar subquery: its body's one column; a predicate: boolean."""
        if sq.WhichOneof("subquery_type") == "scalar":
            cols, outer = scope
            saved, self._schemas = self._schemas, {}  # the body's paths are not known here: own cache
            try:
                body = self.schema(sq.scalar.input, "subquery", [cols, *outer])
            finally:
                self._schemas = saved
            return body[0] if len(body) == 1 else UNKNOWN
        return BOOLEAN

    def _type_nested(self, e: Expression.Nested, scope: Record, path: str) -> str:
        return e.WhichOneof("nested_type") or UNKNOWN

    def _type_context_variable(self, v: Expression.ExecutionContextVariable, scope: Record, path: str) -> str:
        var = v.WhichOneof("execution_context_variable_type")
        return type_str(tp.Type(**{_CONTEXT_TYPES[var]: getattr(v, var)})) if var else UNKNOWN

    def _selection_type(self, ref: Expression.FieldReference, cols: list[str], outer: list[list[str]]) -> str:
        root = ref.WhichOneof("root_type")
        record = cols
        if root == "outer_reference":
            steps = ref.outer_reference.steps_out
            record = outer[steps - 1] if 0 < steps <= len(outer) else []
        elif root in ("expression", "lambda_parameter_reference"):
            return UNKNOWN
        if ref.WhichOneof("reference_type") != "direct_reference":
            return UNKNOWN
        seg = ref.direct_reference
        if seg.WhichOneof("reference_type") != "struct_field":
            return UNKNOWN
        i = seg.struct_field.field
        if seg.struct_field.HasField("child") or not 0 <= i < len(record):
            return UNKNOWN
        return record[i]

    # -- expressions as short text

    def _fname(self, anchor: int) -> str:
        ref = self.functions.get(anchor)
        return ref.base if ref else f"#{anchor}"

    def expr(self, e: Expression) -> str:
        return _clip(self._expr(e))

    def _expr(self, e: Expression) -> str:
        kind = e.WhichOneof("rex_type")
        if kind == "literal":
            return _literal_text(e.literal)
        if kind == "selection":
            ref = e.selection
            seg = ref.direct_reference.struct_field.field if ref.HasField("direct_reference") else "?"
            if ref.WhichOneof("root_type") == "outer_reference":
                return f"outer[{ref.outer_reference.steps_out}].${seg}"
            return f"${seg}"
        if kind in ("scalar_function", "window_function"):
            fn = getattr(e, kind)
            args = []
            for a in fn.arguments:
                akind = a.WhichOneof("arg_type")
                args.append(self._expr(a.value) if akind == "value" else a.enum if akind == "enum" else "type")
            over = " OVER (...)" if kind == "window_function" else ""
            return f"{self._fname(fn.function_reference)}({', '.join(args)}){over}"
        if kind == "cast":
            return f"cast({self._expr(e.cast.input)} AS {type_str(e.cast.type)})"
        if kind == "if_then":
            return "if_then(...)"
        if kind == "switch_expression":
            return "switch(...)"
        if kind == "singular_or_list":
            return f"{self._expr(e.singular_or_list.value)} IN ({len(e.singular_or_list.options)} values)"
        if kind == "subquery":
            sub = e.subquery.WhichOneof("subquery_type") or "?"
            return f"<{SUBQUERY_LABEL.get(sub, sub)} subquery>"
        return f"<{kind}>"


def _literal_text(lit: Expression.Literal) -> str:
    kind = lit.WhichOneof("literal_type")
    if kind == "null":
        return "NULL"
    if kind in ("string", "fixed_char"):
        return repr(getattr(lit, kind))
    if kind == "var_char":
        return repr(lit.var_char.value)
    if kind in ("boolean", "i8", "i16", "i32", "i64", "fp32", "fp64"):
        return str(getattr(lit, kind))
    try:
        from ..translation.literals import python_value

        value, _ = python_value(lit)
        return f"{kind} {value}"
    except Exception:
        return f"<{kind}>"


def _join_type_name(jt: int) -> str:
    """A join type as JoinRel names it (`logical_join_type` maps the physical joins' numbering); a value the enum
    does not name is shown as its number (explain describes plans that validate may refuse)."""
    if jt not in JoinRel.JoinType.values():
        return str(jt)
    return JoinRel.JoinType.Name(cast("alg.JoinRel.JoinType.ValueType", jt)).removeprefix("JOIN_TYPE_")


def _clip(text: str) -> str:
    return text if len(text) <= MAX_EXPR_CHARS else text[: MAX_EXPR_CHARS - 1] + "…"


def _key_exprs(r: alg.AggregateRel) -> list[Expression]:
    """The aggregate's distinct grouping keys, in output order."""
    return list(r.grouping_expressions)


def _inputs(body: Any, path: str) -> Iterator[tuple[alg.Rel, str]]:
    for child, cpath in children(body, path):
        if isinstance(child, alg.Rel):
            yield child, cpath


def subquery_inputs(body: Message, path: str) -> Iterator[tuple[alg.Rel, str, str]]:
    """Each subquery's own relation in a relation's expressions, with its path and a label
    (e.g. "EXISTS subquery in condition")."""
    for sq, spath in subquery_relations(body, path):
        if sq.WhichOneof("subquery_type") is None:
            continue
        kind, rel, rel_path = subquery_body(sq, spath)
        where = spath[len(path) + 1 :].split(".")[0]
        yield rel, rel_path, f"{SUBQUERY_LABEL[kind]} subquery in {where}"


def plan_tree(consumer: SubstraitConsumer) -> str:
    """The consumer's plan as an indented tree with schemas (tables are shown as resolved, if translated)."""
    return PlanTree(consumer.plan, consumer.extensions, consumer.quirks, consumer.tables_read).render()


def plan_tree_of(plan: Any) -> str:
    """The same tree for a bare Plan (no consumer, no resolved tables)."""
    return PlanTree(plan, Extensions(plan), Quirks.of(plan), []).render()


register(
    *PlanTree.kind_tables(),
    KindTable.of("explain", "read_type", KINDS["read_type"]),  # each shown by its kind, a named table by its name
    KindTable.of("explain", "literal_type", KINDS["literal_type"]),  # `literal_type` names every kind
    KindTable.of("explain", "subquery_type", SUBQUERY_LABEL),
    KindTable.of(
        "explain",
        "root_type",
        ("root_reference", "outer_reference"),
        dict.fromkeys(("expression", "lambda_parameter_reference"), "its type is not derived"),
    ),
)

__all__ = ["UNKNOWN", "PlanTree", "literal_type", "plan_tree", "plan_tree_of", "schema_str", "type_str"]
