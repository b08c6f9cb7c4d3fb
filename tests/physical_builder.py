"""Plan-building helpers for the physical relations of Substrait 0.108 (see plan_builder.py for the rest)."""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf import any_pb2, wrappers_pb2
from plan_builder import Expr, Rel, SortField, _common, _schema, i64, null, seg_field
from substrait import algebra_pb2 as alg

Key = alg.ComparisonJoinKey
EQ = Key.SIMPLE_COMPARISON_TYPE_EQ
NOT_DISTINCT = Key.SIMPLE_COMPARISON_TYPE_IS_NOT_DISTINCT_FROM
MIGHT_EQUAL = Key.SIMPLE_COMPARISON_TYPE_MIGHT_EQUAL
ROWS_ONLY = alg.FETCH_MODE_ROWS_ONLY
WITH_TIES = alg.FETCH_MODE_WITH_TIES


def ref(i: int) -> Expr.FieldReference:
    r = Expr.FieldReference(direct_reference=seg_field(i))
    r.root_reference.SetInParent()
    return r


def lateral_ref(i: int, anchor: int) -> Expr:
    """A field of the current left row of the lateral join with `rel_anchor` `anchor`."""
    r = Expr.FieldReference(direct_reference=seg_field(i))
    r.outer_reference.rel_reference = anchor
    return Expr(selection=r)


def keys(*pairs: tuple[int, int], comparison: int = EQ) -> list[Key]:
    return [Key(left=ref(a), right=ref(b), comparison=Key.ComparisonType(simple=comparison)) for a, b in pairs]


def hash_join(
    left: Rel,
    right: Rel,
    type_name: str,
    key_list: Sequence[Key],
    residual: Expr | None = None,
    post: Expr | None = None,
    build_left: bool = False,
) -> Rel:
    body = alg.HashJoinRel(left=left, right=right, keys=list(key_list), type=alg.HashJoinRel.JoinType.Value(type_name))
    if build_left:
        body.build_input = alg.HashJoinRel.BUILD_INPUT_LEFT
    if residual is not None:
        body.residual_expression.CopyFrom(residual)
    if post is not None:
        body.post_join_filter.CopyFrom(post)
    _common(body, None)
    return Rel(hash_join=body)


def merge_join(left: Rel, right: Rel, type_name: str, key_list: Sequence[Key], post: Expr | None = None) -> Rel:
    body = alg.MergeJoinRel(
        left=left, right=right, keys=list(key_list), type=alg.MergeJoinRel.JoinType.Value(type_name)
    )
    if post is not None:
        body.post_join_filter.CopyFrom(post)
    _common(body, None)
    return Rel(merge_join=body)


def nested_loop_join(left: Rel, right: Rel, type_name: str, condition: Expr | None = None) -> Rel:
    body = alg.NestedLoopJoinRel(left=left, right=right, type=alg.NestedLoopJoinRel.JoinType.Value(type_name))
    if condition is not None:
        body.expression.CopyFrom(condition)
    _common(body, None)
    return Rel(nested_loop_join=body)


def lateral_join(
    left: Rel, right: Rel, type_: int, anchor: int, condition: Expr | None = None, post: Expr | None = None
) -> Rel:
    body = alg.LateralJoinRel(left=left, right=right, type=type_)
    if condition is not None:
        body.expression.CopyFrom(condition)
    if post is not None:
        body.post_join_filter.CopyFrom(post)
    _common(body, None)
    body.common.rel_anchor = anchor
    return Rel(lateral_join=body)


def top_n(input: Rel, *fields: tuple[Expr, int], count: int | None, offset: int = 0, ties: bool = False) -> Rel:
    """`count` None: a NULL count (all rows)."""
    body = alg.TopNRel(input=input, sorts=[SortField(expr=e, direction=d) for e, d in fields])
    body.mode = WITH_TIES if ties else ROWS_ONLY
    if offset:
        body.offset.literal.i64 = offset
    if count is None:
        body.count.CopyFrom(null(i64()))
    else:
        body.count.literal.i64 = count
    _common(body, None)
    return Rel(top_n=body)


def expand(input: Rel, *fields: Expr | Sequence[Expr]) -> Rel:
    """Each field an expression (consistent) or a list of duplicates (switching)."""
    body = alg.ExpandRel(input=input)
    for f in fields:
        if isinstance(f, Expr):
            body.fields.add().consistent_field.CopyFrom(f)
        else:
            body.fields.add().switching_field.duplicates.extend(f)
    _common(body, None)
    return Rel(expand=body)


def exchange(input: Rel, kind: str, partition_count: int = 0, fields: Sequence[int] = (), bucket=None) -> Rel:
    body = alg.ExchangeRel(input=input, partition_count=partition_count)
    if kind == "scatter_by_fields":
        body.scatter_by_fields.fields.extend(ref(i) for i in fields)
    elif kind == "single_target":
        body.single_target.expression.CopyFrom(bucket)
    elif kind == "multi_target":
        body.multi_target.expression.CopyFrom(bucket)
    else:
        getattr(body, kind).SetInParent()
    _common(body, None)
    return Rel(exchange=body)


def context_variable(kind: str, precision: int = 6) -> Expr:
    e = Expr()
    v = e.execution_context_variable
    getattr(v, kind).SetInParent()
    if kind == "current_timestamp":
        v.current_timestamp.precision = precision
    return e


def packed(message) -> any_pb2.Any:
    out = any_pb2.Any()
    out.Pack(message)
    return out


def extension_single(input: Rel, detail) -> Rel:
    return Rel(extension_single=alg.ExtensionSingleRel(input=input, detail=packed(detail)))


def extension_leaf(detail) -> Rel:
    return Rel(extension_leaf=alg.ExtensionLeafRel(detail=packed(detail)))


def extension_table(names: Sequence[str], types, detail) -> Rel:
    read = alg.ReadRel(base_schema=_schema(names, types))
    read.extension_table.detail.CopyFrom(packed(detail))
    return Rel(read=read)


INT64_VALUE_URL = "type.googleapis.com/" + wrappers_pb2.Int64Value.DESCRIPTOR.full_name
