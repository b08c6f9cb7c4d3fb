"""JoinRel (all twelve types), CrossRel, and the SINGLE and MARK joins Spark's DataFrame API lacks."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pyspark.sql import Column, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T
from substrait import algebra_pb2 as alg

from ..errors import PlanInvalidError, UnsupportedFeatureError
from ..relation import Relation, beside, column, side_by_side
from ..scope import Scope
from ..walk import contains

if TYPE_CHECKING:
    from ..consumer import SubstraitConsumer

JoinRel = alg.JoinRel
_SPARK_HOW = {
    JoinRel.JOIN_TYPE_INNER: "inner",
    JoinRel.JOIN_TYPE_OUTER: "full",
    JoinRel.JOIN_TYPE_LEFT: "left",
    JoinRel.JOIN_TYPE_RIGHT: "right",
    JoinRel.JOIN_TYPE_LEFT_SEMI: "left_semi",
    JoinRel.JOIN_TYPE_LEFT_ANTI: "left_anti",
}
# Join types whose inputs may keep pending projections: the sides (0 left, 1 right) that must not, because
# the join gives them NULL rows where a pending expression would not yield NULL (e.g. a literal).
_NULLABLE: dict[int, tuple[int, ...]] = {
    JoinRel.JOIN_TYPE_INNER: (),
    JoinRel.JOIN_TYPE_LEFT_SEMI: (),
    JoinRel.JOIN_TYPE_LEFT_ANTI: (),
    JoinRel.JOIN_TYPE_RIGHT_SEMI: (),
    JoinRel.JOIN_TYPE_RIGHT_ANTI: (),
    JoinRel.JOIN_TYPE_LEFT: (1,),
    JoinRel.JOIN_TYPE_RIGHT: (0,),
    JoinRel.JOIN_TYPE_OUTER: (0, 1),
}
# Right-side variants run as their left-side twin with the inputs swapped.
_SWAPPED = {
    JoinRel.JOIN_TYPE_RIGHT_SEMI: JoinRel.JOIN_TYPE_LEFT_SEMI,
    JoinRel.JOIN_TYPE_RIGHT_ANTI: JoinRel.JOIN_TYPE_LEFT_ANTI,
    JoinRel.JOIN_TYPE_RIGHT_SINGLE: JoinRel.JOIN_TYPE_LEFT_SINGLE,
    JoinRel.JOIN_TYPE_RIGHT_MARK: JoinRel.JOIN_TYPE_LEFT_MARK,
}


def _concat(left: Relation, right: Relation) -> Relation:
    """The record a join condition sees: left columns then right columns (a view, not a DataFrame op)."""
    return beside(left, right, [*left.names, *right.names], [*left.types, *right.types], left.frame)


def _merge_correlation(left: Relation, right: Relation, df, names, types, path: str) -> Relation:
    if left.keyed or right.keyed:
        raise UnsupportedFeatureError("join above a correlated aggregate inside a subquery", path)
    pending = [*left.pending, *right.pending]
    out = Relation(df, names, types, [], pending)
    hidden = out.carried(names)
    extra = [n for n in [*left.hidden, *right.hidden] if n not in hidden and n not in names]
    out.hidden = hidden + extra
    return out


# The join condition over the record of both inputs (None: every pair matches).
Condition = Callable[[Scope], "Column | None"]


def translate_join(cx: SubstraitConsumer, rel: JoinRel, path: str, outer: Scope | None) -> Relation:
    left = cx.rel(rel.left, f"{path}.left", outer)
    right = cx.rel(rel.right, f"{path}.right", outer)

    def condition(scope: Scope) -> Column | None:
        return cx.expression(rel.expression, scope, f"{path}.expression").col if rel.HasField("expression") else None

    post = rel.post_join_filter if rel.HasField("post_join_filter") else None
    return join_inputs(cx, left, right, rel.type, condition, post, [rel.expression, rel.post_join_filter], path, outer)


def join_inputs(
    cx: SubstraitConsumer,
    left: Relation,
    right: Relation,
    jt: int,
    condition: Condition,
    post_join_filter: alg.Expression | None,
    expressions: list[alg.Expression],
    path: str,
    outer: Scope | None,
) -> Relation:
    """Join two translated inputs: `jt` a JoinRel join type, `condition` builds the match condition over both
    inputs' record, `expressions` are the plan's expressions the join evaluates (a subquery in one forces the
    inputs to be materialized). Shared by JoinRel and the physical joins (`physical_join.py`)."""
    if jt == JoinRel.JOIN_TYPE_UNSPECIFIED:
        raise PlanInvalidError("join type unspecified", f"{path}.type")
    deferred = (
        jt in _NULLABLE
        and left.can_defer()
        and right.can_defer()
        and not any(contains(e, alg.Expression.Subquery) for e in expressions)
    )
    if deferred:
        # Pending projections stay pending through the join, except on a side the join may fill with NULLs.
        left, right = side_by_side(left, right)
        for side in _NULLABLE[jt]:
            (left, right)[side].materialized()
    else:
        left, right = left.materialized(), right.materialized()
    if (left.correlated() or right.correlated()) and jt != JoinRel.JOIN_TYPE_INNER:
        raise UnsupportedFeatureError("correlated input under a non-inner join in a subquery", path)
    both = _concat(left, right)
    cond = condition(Scope(both, outer))
    post = None
    if post_join_filter is not None:
        post = cx.expression(post_join_filter, Scope(both, outer), f"{path}.post_join_filter").col

    swapped = jt in _SWAPPED
    if swapped:
        jt = _SWAPPED[jt]
        left, right = right, left

    if jt in _SPARK_HOW:
        how = _SPARK_HOW[jt]
        df = (
            left.frame.join(right.frame, on=cond, how=how)
            if cond is not None
            else left.frame.join(right.frame, how=how)
        )
        if how in ("left_semi", "left_anti"):
            if post is not None:
                raise UnsupportedFeatureError("post-join filter on a semi or anti join", f"{path}.post_join_filter")
            out = left.over(df) if deferred else _merge_correlation(left, right, df, left.names, left.types, path)
        else:
            names, types = [*left.names, *right.names], [*left.types, *right.types]
            if deferred:
                out = beside(left, right, names, types, df)
            else:
                out = _merge_correlation(left, right, df, names, types, path)
    elif jt == JoinRel.JOIN_TYPE_LEFT_SINGLE:
        out, _ = single_join(cx, left, right, cond, path)
        out = Relation(out.df, [*left.names, *right.names], [*left.types, *right.types])
    elif jt == JoinRel.JOIN_TYPE_LEFT_MARK:
        out, mark = mark_join(cx, left, right, cond, three_valued=True)
        out = Relation(out.df, [*left.names, mark], [*left.types, T.BooleanType()])
    else:
        raise UnsupportedFeatureError(f"join type {JoinRel.JoinType.Name(jt)}", f"{path}.type")

    if swapped and jt in (JoinRel.JOIN_TYPE_LEFT_SINGLE,):
        # Output order is still the plan's left columns then right columns.
        n_right = len(left.names)
        order = [*range(n_right, len(out.names)), *range(n_right)]
        out = out.select_positions(order, cx.names)
    if post is not None:
        out = out.over(out.frame.filter(post))
    if deferred:  # uncorrelated inputs: the frame holds the columns `out` says it does
        return out
    keep = [*out.names, *out.hidden]
    if list(out.df.columns) != keep:
        out = out.with_df(out.df.select(*[column(n) for n in keep]))
    return out


def translate_cross(cx: SubstraitConsumer, rel: alg.CrossRel, path: str, outer: Scope | None) -> Relation:
    left = cx.rel(rel.left, f"{path}.left", outer)
    right = cx.rel(rel.right, f"{path}.right", outer)
    if left.can_defer() and right.can_defer():
        left, right = side_by_side(left, right)
        names, types = [*left.names, *right.names], [*left.types, *right.types]
        return beside(left, right, names, types, left.frame.crossJoin(right.frame))
    df = left.df.crossJoin(right.df)
    return _merge_correlation(left, right, df, [*left.names, *right.names], [*left.types, *right.types], path)


def single_join(
    cx: SubstraitConsumer, left: Relation, right: Relation, cond: Column | None, path: str
) -> tuple[Relation, str]:
    """Left join that fails if a left row matches more than one right row (SQL's scalar subquery rule).

    Returns the joined relation (left's columns, then right's as hidden) and the first right column's name.
    """
    row_id = cx.names.fresh()
    tagged = left.df.withColumn(row_id, F.monotonically_increasing_id())
    # The right side's hidden columns are the correlation keys `cond` reads.
    joined = tagged.join(right.df.select(*right.cols(), *right.hidden_cols()), on=cond, how="left")
    matches = F.count(F.lit(1)).over(Window.partitionBy(column(row_id)))
    first = right.names[0]
    message = F.lit(f"more than one row returned by a subquery used as a value (at {path})")
    checked = F.when(matches > 1, F.raise_error(message)).otherwise(column(first)).alias(first)
    rest = [column(n) for n in right.names[1:]]
    df = joined.select(*left.cols(), *left.hidden_cols(), checked, *rest)
    out = Relation(df, left.names, left.types, [*left.hidden, *right.names], left.pending, left.keyed, left.count_bug)
    return out, first


def mark_join(
    cx: SubstraitConsumer, left: Relation, right: Relation, cond: Column | None, three_valued: bool
) -> tuple[Relation, str]:
    """Left rows plus a boolean: whether some right row matches (NULL if none matches but one is unknown).

    With `three_valued` false (EXISTS) unknown counts as no match, which keeps the join an equi-join.
    """
    row_id, flag, mark = cx.names.fresh(), cx.names.fresh(), cx.names.fresh()
    tagged = left.df.withColumn(row_id, F.monotonically_increasing_id())
    flagged = right.df.select(*right.cols(), *right.hidden_cols(), F.lit(True).alias(flag))
    cond = cond if cond is not None else F.lit(True)
    on = (cond | cond.isNull()) if three_valued else cond
    joined = tagged.join(flagged, on=on, how="left")
    matched = column(flag).isNotNull()
    if three_valued:
        value = (
            F.when(F.max(F.when(matched, F.coalesce(cond, F.lit(False))).otherwise(F.lit(False))), F.lit(True))
            .when(F.max(matched), F.lit(None).cast(T.BooleanType()))
            .otherwise(F.lit(False))
        )
    else:
        value = F.max(matched)
    keep = [*left.names, *left.hidden]
    df = (
        joined.groupBy(column(row_id)).agg(*[F.first(column(n)).alias(n) for n in keep], value.alias(mark)).drop(row_id)
    )
    out = Relation(df, left.names, left.types, [*left.hidden, mark], left.pending, left.keyed, left.count_bug)
    return out, mark
