"""Relation lineage: each handler takes the walker, the relation's message, its plan path and the enclosing
query's scope (inside a subquery), and returns the relation's `RelLineage` before its `emit` (the walker applies
every relation's emit).

Output columns follow the spec's layouts, as the consumer translates them (a project's input columns then its
expressions, a join's left then right columns, an aggregate's distinct grouping keys, measures and — with several
grouping sets — the grouping-set index). What decides the rows — read and relation filters, join conditions,
grouping keys, sort keys — is INDIRECT lineage of the whole relation and carries up to every relation above it.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from substrait import algebra_pb2 as alg
from substrait import type_pb2 as tp

from ...errors import PlanInvalidError, UnsupportedFeatureError
from ...plan_visitor import JOIN_OUTPUT, JoinOutput
from ...walk import columns_of, conjunct_paths, local_fields
from . import writes
from .expressions import aggregation, each, sort_keys, type_of
from .model import (
    FILTER,
    GROUP_BY,
    IDENTITY,
    JOIN,
    NONE,
    SORT,
    TRANSFORMATION,
    WINDOW,
    Col,
    Dataset,
    InputField,
    RelLineage,
    Scope,
    Sources,
    apply,
    merge,
)

if TYPE_CHECKING:
    from .walker import LineageWalker

# fn(walker, the relation oneof's message — its class is the key's, which no static type can say —, path, outer)
RelHandler = Callable[["LineageWalker", Any, str, "Scope | None"], RelLineage]
ReadRel = alg.ReadRel
SetRel = alg.SetRel
VALUES = "values"  # the dataset a virtual table's columns come from


# --- read ----------------------------------------------------------------------------------------------------


def read(w: LineageWalker, rel: ReadRel, path: str, outer: Scope | None) -> RelLineage:
    kind = rel.WhichOneof("read_type")
    if kind is None:
        raise PlanInvalidError("read with no source set", path)
    schema = rel.base_schema
    columns: Sequence[tuple[str, tp.Type | None]]  # None: the type is the table's (below)
    if w.quirks.untyped_base_schema and kind == "named_table" and schema.names and not schema.struct.types:
        columns = [(n, None) for n in schema.names]  # DataFusion: names only, typed by the table (Quirks)
    else:
        columns = columns_of(schema, f"{path}.base_schema")
    names = [n for n, _ in columns]
    p = f"{path}.{kind}"
    source = getattr(rel, kind)
    if kind == "extension_table":
        out = w.extension(source.detail, [], p, table=True)
    elif kind == "virtual_table":
        out = _virtual_table(w, source, columns, p, outer)
    else:
        datasets = _datasets(w, kind, source, p)
        for d in datasets:
            w.read(d, kind, names)
        out = RelLineage([Col({InputField(d, n): frozenset({IDENTITY}) for d in datasets}, t) for n, t in columns])
    scope = Scope(out.columns, outer)
    for name in ("filter", "best_effort_filter"):  # both over the base schema, before the projection
        if rel.HasField(name):
            out = out.with_indirect(apply(FILTER, w.expr(getattr(rel, name), scope, f"{path}.{name}")))
    if rel.HasField("projection"):
        cols = []
        for item in rel.projection.select.struct_items:
            if not 0 <= item.field < len(out.columns):
                raise PlanInvalidError(f"projection field {item.field} out of range", f"{path}.projection")
            col = out.columns[item.field]
            cols.append(Col(apply(TRANSFORMATION, col.sources)) if item.HasField("child") else col)  # a part of it
        out = RelLineage(cols, out.indirect)
    return out


# Read sources whose columns come from a dataset the plan names (by table name, file or metadata URI).
DATASET_READS = ("named_table", "local_files", "iceberg_table")


def _datasets(w: LineageWalker, kind: str, source, path: str) -> list[Dataset]:
    if kind == "named_table":
        return [w.dataset(list(source.names), path)]
    if kind == "local_files":
        if not source.items:
            raise PlanInvalidError("local files read with no items", path)
        out = []
        for i, item in enumerate(source.items):
            uri = getattr(item, item.WhichOneof("path_type") or "uri_file", "")
            if not uri:
                raise PlanInvalidError("local file item with no path", f"{path}.items[{i}]")
            out.append(w.dataset([uri], f"{path}.items[{i}]"))
        return out
    if kind == "iceberg_table":
        if source.WhichOneof("table_type") != "direct" or not source.direct.metadata_uri:
            raise PlanInvalidError("Iceberg table read with no metadata file", path)
        return [w.dataset([source.direct.metadata_uri], f"{path}.direct")]
    raise UnsupportedFeatureError(f"lineage of a {kind} read", path)


def _virtual_table(w: LineageWalker, table: ReadRel.VirtualTable, columns, path: str, outer) -> RelLineage:
    """Inline rows: the dataset `values`, plus whatever the rows' expressions read (outer references)."""
    rows = [list(r.fields) for r in table.expressions]
    width = len(columns) or (len(rows[0]) if rows else 0)
    if not columns:  # no base schema (DuckDB 1.1 writes VALUES so): positional names
        columns = [(f"#{i}", None) for i in range(width)]
    dataset = Dataset(w.namespace, VALUES)
    w.read(dataset, "virtual_table", [n for n, _ in columns])
    scope = Scope([], outer)
    cols = []
    for i, (name, t) in enumerate(columns):
        exprs = [(r[i], f"{path}.expressions[{k}].fields[{i}]") for k, r in enumerate(rows) if i < len(r)]
        own = {InputField(dataset, name): frozenset({IDENTITY})}
        cols.append(Col(merge(own, *(w.expr(e, scope, p) for e, p in exprs)), t))
    for k, rec in enumerate(rows):
        if len(rec) != width:
            raise PlanInvalidError(f"row of {len(rec)} values for {width} columns", f"{path}.expressions[{k}]")
    return RelLineage(cols)


# --- one input ---------------------------------------------------------------------------------------------


def filter_(w: LineageWalker, rel: alg.FilterRel, path: str, outer: Scope | None) -> RelLineage:
    """The condition's inputs are INDIRECT FILTER; over a cross product, a conjunct reading several of its inputs
    is a join predicate (`FROM a, b WHERE a.k = b.k`, as Calcite-based producers write joins): INDIRECT JOIN."""
    src = w.rel(rel.input, f"{path}.input", outer)
    if not rel.HasField("condition"):
        return src
    scope = Scope(src.columns, outer)
    parts = []
    for c, p in conjunct_paths(w.extensions.functions, rel.condition, f"{path}.condition"):
        kind = JOIN if src.segments and _spans(c, src.segments) else FILTER
        parts.append(apply(kind, w.expr(c, scope, p)))
    return src.with_indirect(*parts)


def _spans(e: alg.Expression, segments: tuple[int, ...]) -> bool:
    """Whether an expression reads columns of more than one input of a cross product."""
    bounds = list(itertools.accumulate(segments))
    return len({bisect.bisect_right(bounds, i) for i in local_fields(e)}) > 1


def project(w: LineageWalker, rel: alg.ProjectRel, path: str, outer: Scope | None) -> RelLineage:
    src = w.rel(rel.input, f"{path}.input", outer)
    scope = Scope(src.columns, outer)
    exprs = [
        Col(w.expr(e, scope, f"{path}.expressions[{i}]"), type_of(e, scope)) for i, e in enumerate(rel.expressions)
    ]
    # The spec's output is the input's columns then the expressions (DuckDB 1.1, DataFusion 40: expressions only).
    base = [] if w.quirks.project_outputs_expressions_only else src.columns
    return RelLineage([*base, *exprs], src.indirect)


def sort(w: LineageWalker, rel: alg.SortRel, path: str, outer: Scope | None) -> RelLineage:
    src = w.rel(rel.input, f"{path}.input", outer)
    keys = each(w, SORT, sort_keys(rel.sorts, f"{path}.sorts"), Scope(src.columns, outer))
    return src.with_indirect(keys)


def fetch(w: LineageWalker, rel: alg.FetchRel, path: str, outer: Scope | None) -> RelLineage:
    """LIMIT/OFFSET keep columns as they are; offset/count expressions (literals, parameters) read no column."""
    src = w.rel(rel.input, f"{path}.input", outer)
    exprs = [(getattr(rel, f), f"{path}.{f}") for f in ("offset_expr", "count_expr") if rel.HasField(f)]
    return src.with_indirect(each(w, FILTER, exprs, Scope([], outer)))


def aggregate(w: LineageWalker, rel: alg.AggregateRel, path: str, outer: Scope | None) -> RelLineage:
    rel = w.quirks.as_written(rel)
    src = w.rel(rel.input, f"{path}.input", outer)
    scope = Scope(src.columns, outer)
    keys, n_sets = _grouping_keys(w, rel, scope, path)
    cols = [Col(w.expr(e, scope, p), type_of(e, scope)) for e, p in keys]
    for i, m in enumerate(rel.measures):
        p = f"{path}.measures[{i}]"
        fn = m.measure
        sources = merge(
            aggregation(w, fn, scope, f"{p}.measure"),
            each(w, SORT, sort_keys(fn.sorts, f"{p}.measure.sorts"), scope),  # an ordered aggregate's order
            apply(FILTER, w.expr(m.filter, scope, f"{p}.filter")) if m.HasField("filter") else NONE,
        )
        cols.append(Col(sources, fn.output_type if fn.HasField("output_type") else None))
    if n_sets > 1:
        cols.insert(len(keys) if w.quirks.grouping_index_first(rel) else len(cols), Col(NONE, grouping_index=True))
    grouping = merge(*(apply(GROUP_BY, c.sources) for c in cols[: len(keys)]))
    return RelLineage(cols, merge(src.indirect, grouping))


def _grouping_keys(w: LineageWalker, rel: alg.AggregateRel, scope: Scope, path: str):
    """The distinct grouping expressions (with paths) and the number of grouping sets."""
    for g, grouping in enumerate(rel.groupings):
        for r in grouping.expression_references:
            if not 0 <= r < len(rel.grouping_expressions):
                raise PlanInvalidError(f"grouping expression reference {r} out of range", f"{path}.groupings[{g}]")
    keys = [(e, f"{path}.grouping_expressions[{i}]") for i, e in enumerate(rel.grouping_expressions)]
    return keys, len(rel.groupings)


def window(w: LineageWalker, rel: alg.ConsistentPartitionWindowRel, path: str, outer: Scope | None) -> RelLineage:
    """The input's columns, then one column per window function: its arguments AGGREGATION, the partitioning and
    ordering WINDOW (for that column only: the window does not change which rows there are)."""
    src = w.rel(rel.input, f"{path}.input", outer)
    scope = Scope(src.columns, outer)
    partitions = [(e, f"{path}.partition_expressions[{i}]") for i, e in enumerate(rel.partition_expressions)]
    frame = each(w, WINDOW, partitions + sort_keys(rel.sorts, f"{path}.sorts"), scope)
    cols = [
        Col(
            merge(aggregation(w, fn, scope, f"{path}.window_functions[{i}]"), frame),
            fn.output_type if fn.HasField("output_type") else None,
        )
        for i, fn in enumerate(rel.window_functions)
    ]
    return RelLineage([*src.columns, *cols], src.indirect)


def exchange(w: LineageWalker, rel: alg.ExchangeRel, path: str, outer: Scope | None) -> RelLineage:
    """Redistribution only: the rows and columns are the input's."""
    return w.rel(rel.input, f"{path}.input", outer)


def expand(w: LineageWalker, rel: alg.ExpandRel, path: str, outer: Scope | None) -> RelLineage:
    """Each output column is one expression (consistent) or one of several, row copy by row copy (switching)."""
    src = w.rel(rel.input, f"{path}.input", outer)
    scope = Scope(src.columns, outer)
    cols = []
    for i, f in enumerate(rel.fields):
        p = f"{path}.fields[{i}]"
        kind = f.WhichOneof("field_type")
        if kind == "consistent_field":
            e = f.consistent_field
            cols.append(Col(w.expr(e, scope, f"{p}.consistent_field"), type_of(e, scope)))
        elif kind == "switching_field":
            dups = [(e, f"{p}.switching_field.duplicates[{k}]") for k, e in enumerate(f.switching_field.duplicates)]
            cols.append(Col(merge(*(w.expr(e, scope, q) for e, q in dups))))
        else:
            raise PlanInvalidError("expand field with nothing set", p)
    # The input columns past the definitions pass through; the duplicate's ordinal reads no column (and, like a
    # grouping-set index, producers may leave it unnamed: consumer/translation/relations/expand.py).
    ordinal = Col(NONE, tp.Type(i64=tp.Type.I64(nullability=tp.Type.NULLABILITY_REQUIRED)), grouping_index=True)
    return RelLineage([*cols, *src.columns[len(cols) :], ordinal], src.indirect)


def top_n(w: LineageWalker, rel: alg.TopNRel, path: str, outer: Scope | None) -> RelLineage:
    """ORDER BY ... LIMIT: the sort keys decide which rows remain (INDIRECT SORT), the columns are the input's."""
    src = w.rel(rel.input, f"{path}.input", outer)
    keys = each(w, SORT, sort_keys(rel.sorts, f"{path}.sorts"), Scope(src.columns, outer))
    bounds = [(getattr(rel, f), f"{path}.{f}") for f in ("offset", "count") if rel.HasField(f)]
    return src.with_indirect(keys, each(w, FILTER, bounds, Scope([], outer)))


# --- joins ---------------------------------------------------------------------------------------------------


def _join_type(rel, path: str) -> str:
    enum = type(rel).JoinType
    if rel.type not in enum.values():
        raise UnsupportedFeatureError(f"join type {rel.type}", f"{path}.type")
    name = enum.Name(rel.type).removeprefix("JOIN_TYPE_")
    if name == "UNSPECIFIED":
        raise PlanInvalidError("join type unspecified", f"{path}.type")
    return name


def joined(name: str, left: RelLineage, right: RelLineage, condition: Sources, post: Sources, path: str) -> RelLineage:
    """A join's output: its layout's columns; the condition's inputs are INDIRECT JOIN and the post-join filter's
    INDIRECT FILTER for the whole output (a mark join's mark column is computed from the condition)."""
    layout = JOIN_OUTPUT[alg.JoinRel.JoinType.Value(f"JOIN_TYPE_{name}")]
    mark = Col(merge(apply(TRANSFORMATION, condition)))
    cols = {
        JoinOutput.BOTH: [*left.columns, *right.columns],
        JoinOutput.LEFT: left.columns,
        JoinOutput.RIGHT: right.columns,
        JoinOutput.LEFT_MARK: [*left.columns, mark],
        JoinOutput.RIGHT_MARK: [*right.columns, mark],
    }[layout]
    segments = _segments(left, right) if name == "INNER" else None
    return RelLineage(cols, merge(left.indirect, right.indirect, apply(JOIN, condition), apply(FILTER, post)), segments)


def _segments(left: RelLineage, right: RelLineage) -> tuple[int, ...]:
    return (*(left.segments or (len(left.columns),)), *(right.segments or (len(right.columns),)))


def join(w: LineageWalker, rel: alg.JoinRel, path: str, outer: Scope | None) -> RelLineage:
    left = w.rel(rel.left, f"{path}.left", outer)
    right = w.rel(rel.right, f"{path}.right", outer)
    name = _join_type(rel, path)
    both = Scope([*left.columns, *right.columns], outer)
    condition = w.expr(rel.expression, both, f"{path}.expression") if rel.HasField("expression") else NONE
    post = w.expr(rel.post_join_filter, both, f"{path}.post_join_filter") if rel.HasField("post_join_filter") else NONE
    return joined(name, left, right, condition, post, path)


def nested_loop_join(w: LineageWalker, rel: alg.NestedLoopJoinRel, path: str, outer: Scope | None) -> RelLineage:
    left = w.rel(rel.left, f"{path}.left", outer)
    right = w.rel(rel.right, f"{path}.right", outer)
    both = Scope([*left.columns, *right.columns], outer)
    condition = w.expr(rel.expression, both, f"{path}.expression") if rel.HasField("expression") else NONE
    return joined(_join_type(rel, path), left, right, condition, NONE, path)


def keyed_join(w: LineageWalker, rel, path: str, outer: Scope | None) -> RelLineage:
    """HashJoinRel and MergeJoinRel: key pairs (each side's field references over its own input)."""
    left = w.rel(rel.left, f"{path}.left", outer)
    right = w.rel(rel.right, f"{path}.right", outer)
    ls, rs = Scope(left.columns, outer), Scope(right.columns, outer)
    parts = []
    for i, k in enumerate(rel.keys):
        parts.append(w.expr(alg.Expression(selection=k.left), ls, f"{path}.keys[{i}].left"))
        parts.append(w.expr(alg.Expression(selection=k.right), rs, f"{path}.keys[{i}].right"))
    both = Scope([*left.columns, *right.columns], outer)
    post = w.expr(rel.post_join_filter, both, f"{path}.post_join_filter") if rel.HasField("post_join_filter") else NONE
    return joined(_join_type(rel, path), left, right, merge(*parts), post, path)


def lateral_join(w: LineageWalker, rel: alg.LateralJoinRel, path: str, outer: Scope | None) -> RelLineage:
    """The right input sees the left row as its enclosing query (its `rel_reference`s rebased as the consumer
    does, `consumer/translation/relations/lateral.py`); its correlated filters count as the join's condition."""
    # Imported here: relations.lateral imports pyspark, and lineage must not need Spark.
    from ...translation.relations.lateral import checked_type as lateral_checked_type
    from ...translation.relations.lateral import rebase as lateral_rebase

    left = w.rel(rel.left, f"{path}.left", outer)
    right_rel, _ = lateral_rebase(rel.right, rel.common.rel_anchor, f"{path}.right")
    right = w.rel(right_rel, f"{path}.right", Scope(left.columns, outer))
    both = Scope([*left.columns, *right.columns], outer)
    condition = w.expr(rel.expression, both, f"{path}.expression") if rel.HasField("expression") else NONE
    post = w.expr(rel.post_join_filter, both, f"{path}.post_join_filter") if rel.HasField("post_join_filter") else NONE
    lateral_checked_type(rel, path)
    return joined(alg.JoinRel.JoinType.Name(rel.type).removeprefix("JOIN_TYPE_"), left, right, condition, post, path)


def cross(w: LineageWalker, rel: alg.CrossRel, path: str, outer: Scope | None) -> RelLineage:
    left = w.rel(rel.left, f"{path}.left", outer)
    right = w.rel(rel.right, f"{path}.right", outer)
    return RelLineage([*left.columns, *right.columns], merge(left.indirect, right.indirect), _segments(left, right))


# --- several inputs ------------------------------------------------------------------------------------------

# Operations whose output rows are the first input's, the others only deciding which of them remain.
_PRIMARY_ONLY = {
    SetRel.SET_OP_MINUS_PRIMARY,
    SetRel.SET_OP_MINUS_PRIMARY_ALL,
    SetRel.SET_OP_MINUS_MULTISET,
    SetRel.SET_OP_INTERSECTION_PRIMARY,
    SetRel.SET_OP_INTERSECTION_MULTISET,
    SetRel.SET_OP_INTERSECTION_MULTISET_ALL,
}


def set_(w: LineageWalker, rel: SetRel, path: str, outer: Scope | None) -> RelLineage:
    """UNION: each column from every input's column at its position. MINUS / INTERSECT: the first input's
    columns, the other inputs' columns INDIRECT FILTER (they decide which rows remain)."""
    inputs = [w.rel(r, f"{path}.inputs[{i}]", outer) for i, r in enumerate(rel.inputs)]
    if len(inputs) < 2:
        raise PlanInvalidError(f"set operation with {len(inputs)} input(s), needs at least 2", path)
    if rel.op == SetRel.SET_OP_UNSPECIFIED or rel.op not in SetRel.SetOp.values():
        raise PlanInvalidError("set operation unspecified", f"{path}.op")
    first = inputs[0]
    for i, r in enumerate(inputs):
        if len(r.columns) != len(first.columns):
            raise PlanInvalidError(
                f"set input {i} has {len(r.columns)} columns, input 0 has {len(first.columns)}", f"{path}.inputs[{i}]"
            )
    indirect = merge(*(r.indirect for r in inputs))
    if rel.op in _PRIMARY_ONLY:
        others = merge(*(apply(FILTER, c.sources) for r in inputs[1:] for c in r.columns))
        return RelLineage(list(first.columns), merge(indirect, others))
    cols = [
        Col(merge(*(r.columns[k].sources for r in inputs)), first.columns[k].type) for k in range(len(first.columns))
    ]
    return RelLineage(cols, indirect)


def reference(w: LineageWalker, rel: alg.ReferenceRel, path: str, outer: Scope | None) -> RelLineage:
    return w.shared(rel.subtree_ordinal, path, outer)


# --- extension relations: only with a handler for their type URL (walker.extension_relations) ------------------


def extension_single(w: LineageWalker, rel: alg.ExtensionSingleRel, path: str, outer: Scope | None) -> RelLineage:
    return w.extension(rel.detail, [w.rel(rel.input, f"{path}.input", outer)], path)


def extension_multi(w: LineageWalker, rel: alg.ExtensionMultiRel, path: str, outer: Scope | None) -> RelLineage:
    inputs = [w.rel(r, f"{path}.inputs[{i}]", outer) for i, r in enumerate(rel.inputs)]
    return w.extension(rel.detail, inputs, path)


def extension_leaf(w: LineageWalker, rel: alg.ExtensionLeafRel, path: str, outer: Scope | None) -> RelLineage:
    return w.extension(rel.detail, [], path)


RELATIONS: dict[str, RelHandler] = {
    "read": read,
    "filter": filter_,
    "project": project,
    "fetch": fetch,
    "sort": sort,
    "aggregate": aggregate,
    "join": join,
    "cross": cross,
    "set": set_,
    "reference": reference,
    "window": window,
    "exchange": exchange,
    "expand": expand,
    "top_n": top_n,
    "lateral_join": lateral_join,
    "hash_join": keyed_join,
    "merge_join": keyed_join,
    "nested_loop_join": nested_loop_join,
    "extension_single": extension_single,
    "extension_multi": extension_multi,
    "extension_leaf": extension_leaf,
    "write": writes.write,
    "ddl": writes.ddl,
    "update": writes.update,
}

__all__ = ["RELATIONS", "RelHandler", "joined"]
