"""HashJoinRel, MergeJoinRel and NestedLoopJoinRel: the same Spark joins as JoinRel, with Spark's matching hint.

The keys (`ComparisonJoinKey`: a field of each input, compared EQ or IS_NOT_DISTINCT_FROM) and the
residual expression make the join condition; `join.join_inputs` does the rest, so every join type, the
post-join filter and pending projections behave exactly as for JoinRel. The physical strategy becomes a hint
where Spark has the same one: hash -> SHUFFLE_HASH (on the build side), merge -> MERGE (sort-merge join).
Spark decides by itself for nested loops (a broadcast or cartesian nested loop join for non-equi conditions):
no hint. A hint never changes results; Spark ignores one it cannot honour for the join type.

Refused: MIGHT_EQUAL keys (true when either side is NULL: no Spark equi-join has that rule, and spelled out as
`a = b OR a IS NULL OR b IS NULL` it is no longer a key) and custom comparison functions (the spec leaves
their semantics to an extension, unlike `equal`).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column
from substrait import algebra_pb2 as alg

from ...errors import PlanInvalidError, UnsupportedFeatureError
from ..relation import Relation
from ..scope import Scope
from . import join

if TYPE_CHECKING:
    from ..consumer import SubstraitConsumer

Key = alg.ComparisonJoinKey
JoinRel = alg.JoinRel
_COMPARE = {
    # Bound methods (not `Column.__eq__`): `pyspark.sql.Column` is not the Connect client's class.
    Key.SIMPLE_COMPARISON_TYPE_EQ: lambda a, b: a == b,
    Key.SIMPLE_COMPARISON_TYPE_IS_NOT_DISTINCT_FROM: lambda a, b: a.eqNullSafe(b),
}
_BUILD_LEFT = alg.HashJoinRel.BUILD_INPUT_LEFT


def join_type(rel: Any, path: str) -> join.JoinType:
    """The physical join's type as a JoinRel join type (the enums list the same names, numbered differently)."""
    enum = type(rel).JoinType
    if rel.type not in enum.values():
        raise UnsupportedFeatureError(f"join type {rel.type}", f"{path}.type")
    return JoinRel.JoinType.Value(enum.Name(rel.type))


def _side(cx: SubstraitConsumer, ref: alg.Expression.FieldReference, rel: Relation, outer, path: str) -> Column:
    if ref.WhichOneof("root_type") == "outer_reference":
        raise PlanInvalidError("a join key must be a field of its own input", path)
    return cx.expression(alg.Expression(selection=ref), Scope(rel, outer), path).col


def key_condition(
    cx: SubstraitConsumer, rel: Any, left: Relation, right: Relation, outer: Scope | None, path: str
) -> list[Column]:
    """One comparison per key, each side read from its own input."""
    conds = []
    for i, k in enumerate(rel.keys):
        p = f"{path}.keys[{i}]"
        kind = k.comparison.WhichOneof("inner_type")
        if kind == "custom_function_reference":
            raise UnsupportedFeatureError("join key compared by a custom function", f"{p}.comparison")
        compare = _COMPARE.get(k.comparison.simple)
        if compare is None:
            name = Key.SimpleComparisonType.Name(k.comparison.simple) if kind else "unspecified"
            if k.comparison.simple == Key.SIMPLE_COMPARISON_TYPE_MIGHT_EQUAL:
                raise UnsupportedFeatureError(
                    "join key compared MIGHT_EQUAL (a match when either side is NULL is not an equi-join key)",
                    f"{p}.comparison",
                )
            raise PlanInvalidError(f"join key comparison {name}", f"{p}.comparison")
        conds.append(
            compare(_side(cx, k.left, left, outer, f"{p}.left"), _side(cx, k.right, right, outer, f"{p}.right"))
        )
    return conds


def _keyed(cx: SubstraitConsumer, rel: Any, path: str, outer: Scope | None, hint: str) -> Relation:
    jt = join_type(rel, path)
    if not len(rel.keys):
        raise PlanInvalidError("keyed join with no keys", f"{path}.keys")
    left = cx.rel(rel.left, f"{path}.left", outer)
    right = cx.rel(rel.right, f"{path}.right", outer)
    left, right = left.materialized(), right.materialized()  # keys are read from each side by name
    left, right = _hinted(rel, left, right, hint)
    conds = key_condition(cx, rel, left.named(), right.named(), outer, path)

    def condition(scope: Scope) -> Column:
        extra = []
        if rel.HasField("residual_expression"):
            extra.append(cx.expression(rel.residual_expression, scope, f"{path}.residual_expression").col)
        return functools.reduce(operator.and_, [*conds, *extra])

    post = rel.post_join_filter if rel.HasField("post_join_filter") else None
    exprs = [rel.residual_expression, rel.post_join_filter]
    return join.join_inputs(cx, left, right, jt, condition, post, exprs, path, outer)


def _hinted(rel: Any, left: Relation, right: Relation, hint: str) -> tuple[Relation, Relation]:
    """The strategy hint on the side Spark reads it from: the build side of a hash join, either for merge."""
    if hint == "shuffle_hash" and getattr(rel, "build_input", None) == _BUILD_LEFT:
        return left.with_df(left.df.hint(hint)), right
    return left, right.with_df(right.df.hint(hint))


def translate_hash_join(cx: SubstraitConsumer, rel: alg.HashJoinRel, path: str, outer: Scope | None) -> Relation:
    return _keyed(cx, rel, path, outer, "shuffle_hash")


def translate_merge_join(cx: SubstraitConsumer, rel: alg.MergeJoinRel, path: str, outer: Scope | None) -> Relation:
    return _keyed(cx, rel, path, outer, "merge")


def translate_nested_loop_join(
    cx: SubstraitConsumer, rel: alg.NestedLoopJoinRel, path: str, outer: Scope | None
) -> Relation:
    jt = join_type(rel, path)
    left = cx.rel(rel.left, f"{path}.left", outer)
    right = cx.rel(rel.right, f"{path}.right", outer)

    def condition(scope: Scope) -> Column | None:
        # Spec: a nested loop join without an expression matches every pair (a cross product for INNER).
        return cx.expression(rel.expression, scope, f"{path}.expression").col if rel.HasField("expression") else None

    return join.join_inputs(cx, left, right, jt, condition, None, [rel.expression], path, outer)


def refusals(rel: Any, path: str) -> Iterator[tuple[str, str]]:
    """What the translation refuses in a physical join, as (feature, path), without translating (`analyze`)."""
    jt = join_type(rel, path)
    for i, k in enumerate(getattr(rel, "keys", ())):
        p = f"{path}.keys[{i}].comparison"
        if k.comparison.WhichOneof("inner_type") == "custom_function_reference":
            yield "join key compared by a custom function", p
        elif k.comparison.simple == Key.SIMPLE_COMPARISON_TYPE_MIGHT_EQUAL:
            yield "join key compared MIGHT_EQUAL (a match when either side is NULL is not an equi-join key)", p
    if (
        "post_join_filter" in rel.DESCRIPTOR.fields_by_name
        and rel.HasField("post_join_filter")
        and jt in join.SEMI_ANTI
    ):
        yield join.POST_FILTER_ON_SEMI_ANTI, f"{path}.post_join_filter"
    yield from join.condition_subquery(rel, path)
