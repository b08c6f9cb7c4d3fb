"""JoinRel (all twelve types), CrossRel, and the SINGLE and MARK joins Spark's DataFrame API lacks.

A subquery in a JoinRel's condition: for an INNER join, the conjuncts holding one filter the join of the others
(as a FilterRel above it would, `filter.filter_relation`); for the other types, each such conjunct reads one
input only and becomes a boolean column of that input (`marks.py`) the join condition reads. A MARK join on
equalities or one comparison between the inputs is a mark over the other input (`marks.mark`); on any other
condition, the general split (`marks.split_mark`).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeAlias

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T
from substrait import algebra_pb2 as alg

from ...errors import PlanInvalidError, UnsupportedFeatureError
from ...walk import (
    contains,
    local_fields,
    plain_field,
    record_fields,
    reference_levels,
    shift_record_fields,
    value_args,
)
from .. import marks, spark_subqueries
from ..expressions import comparable
from ..relation import Correlation, Relation, beside, column, conjunction, side_by_side
from ..scope import Hosted, Scope, Truth
from ..subqueries import conjunct_paths, predicate_truth, spark_exists, spark_in
from ..unique_keys import keyed
from .filter import filter_relation, join_comparison, right_key_of_equality

if TYPE_CHECKING:
    from ..consumer import SubstraitConsumer

JoinRel = alg.JoinRel
JoinType: TypeAlias = JoinRel.JoinType.ValueType  # an int at run time
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


def _computes(cx: SubstraitConsumer, rel: Relation) -> bool:
    """Whether `rel`'s pending projection computes a column (a ProjectRel expression, not a column reference):
    Spark SQL evaluates such a projection below the join, where the plan has it (`SUBSTRING(x, 1, 20) AS y` in a
    subquery read in FROM), not above it."""
    return rel.projection is not None and any(n in cx.computed_columns for n in rel.names)


def _renames_only(rel: Relation) -> bool:
    """Whether `rel`'s pending projection only gives frame columns new names, in the frame's order (a table read
    again, `read.py`): Spark SQL tells the two reads apart without a Project, so none is made below the join. A
    projection that reorders columns is made there, as Spark SQL's plan has it."""
    p = rel.projection
    if p is None or not p.exprs or rel.hidden:
        return p is None
    if not set(p.exprs) <= set(p.renames):
        return False
    frame = [f.lower() for f in p.frame_names]
    at = [frame.index(p.renames.get(n, n).lower()) if p.renames.get(n, n).lower() in frame else -1 for n in rel.names]
    return -1 not in at and at == sorted(set(at))


def _concat(left: Relation, right: Relation) -> Relation:
    """The record a join condition sees: left columns then right columns (a view, not a DataFrame op)."""
    return beside(left, right, [*left.names, *right.names], [*left.types, *right.types], left.frame)


def _merge_correlation(left: Relation, right: Relation, df, names, types, path: str) -> Relation:
    if left.keyed or right.keyed:
        raise UnsupportedFeatureError("join above a correlated aggregate inside a subquery", path)
    pending = (*left.pending, *right.pending)
    hidden = Correlation(pending).carried(names)
    extra = tuple(n for n in (*left.hidden, *right.hidden) if n not in hidden and n not in names)
    return Relation(df, names, types, Correlation(pending, hidden + extra))


# The join condition over the record of both inputs (None: every pair matches).
Condition = Callable[[Scope], "Column | None"]


SEMI_ANTI = frozenset(
    {
        JoinRel.JOIN_TYPE_LEFT_SEMI,
        JoinRel.JOIN_TYPE_LEFT_ANTI,
        JoinRel.JOIN_TYPE_RIGHT_SEMI,
        JoinRel.JOIN_TYPE_RIGHT_ANTI,
    }
)
POST_FILTER_ON_SEMI_ANTI = "post-join filter on a semi or anti join"


def refusals(rel: JoinRel, path: str) -> Iterator[tuple[str, str]]:
    """What the join translator refuses from the plan alone, as (feature, path) (`analyze` reads it too): a join
    type the protobuf does not name, a post-join filter on a join that outputs one side only. An unspecified type
    is an invalid plan."""
    if rel.type == JoinRel.JOIN_TYPE_UNSPECIFIED:
        raise PlanInvalidError("join type unspecified", f"{path}.type")
    if rel.type not in JoinRel.JoinType.values():
        yield f"join type {rel.type}", f"{path}.type"
    if rel.HasField("post_join_filter") and rel.type in SEMI_ANTI:
        yield POST_FILTER_ON_SEMI_ANTI, f"{path}.post_join_filter"


def translate_join(cx: SubstraitConsumer, rel: JoinRel, path: str, outer: Scope | None) -> Relation:
    left = cx.rel(rel.left, f"{path}.left", outer)
    right = cx.rel(rel.right, f"{path}.right", outer)
    marked = _comparison_mark(cx, rel, left, right, path, outer)
    if marked is not None:
        return marked
    parts = conjunct_paths(cx, rel.expression, f"{path}.expression") if rel.HasField("expression") else []
    inner = _semi_onto_unique(cx, rel, left, right, parts, path, outer)
    if inner is not None:
        return inner
    native = _spark_semi(cx, rel, left, right, [c for c, _ in parts])
    if native is not None:
        return native
    post_parts = []
    if rel.HasField("post_join_filter"):
        post_parts = conjunct_paths(cx, rel.post_join_filter, f"{path}.post_join_filter")
    nested = [(c, p) for c, p in parts if contains(c, alg.Expression.Subquery)]
    post_nested = any(contains(c, alg.Expression.Subquery) for c, _ in post_parts)
    if not nested and not post_nested:
        post = rel.post_join_filter if rel.HasField("post_join_filter") else None
        return join_inputs(cx, left, right, rel.type, _conjunction(cx, parts, []), post, [], path, outer)
    plain = [(c, p) for c, p in parts if not contains(c, alg.Expression.Subquery)]
    if rel.type == JoinRel.JOIN_TYPE_INNER:
        out = join_inputs(cx, left, right, rel.type, _conjunction(cx, plain, []), None, [], path, outer)
        return filter_relation(cx, out.materialized(), [*nested, *post_parts], outer)
    flags = []
    for c, p in nested:
        left, right, flag = _flag_one_side(cx, left, right, c, p, outer, rel.type)
        flags.append(flag)
    post = None if post_nested or not rel.HasField("post_join_filter") else rel.post_join_filter
    out = join_inputs(cx, left, right, rel.type, _conjunction(cx, plain, flags), post, [], path, outer)
    return filter_relation(cx, out.materialized(), post_parts, outer) if post_nested else out


# Semi and anti joins Spark SQL writes as (NOT) EXISTS, by whether they are negated.
_EXISTS = {JoinRel.JOIN_TYPE_LEFT_SEMI: False, JoinRel.JOIN_TYPE_LEFT_ANTI: True}


def _spark_semi(
    cx: SubstraitConsumer,
    rel: JoinRel,
    left: Relation,
    right: Relation,
    parts: list[alg.Expression],
) -> Relation | None:
    """A LEFT SEMI / LEFT ANTI join (DataFusion's decorrelated IN and EXISTS) whose condition compares plain
    columns of the two inputs as Spark SQL's own (NOT) EXISTS subquery (`subqueries.spark_exists`): Spark infers
    filters before it rewrites a subquery into its join, not after, so a `left_semi` join built here gets
    not-null filters Spark SQL's plan has not. The rows are the same: a semi join keeps a left row when some
    right row makes the condition TRUE, EXISTS likewise; an anti join keeps it when none does, which is NOT
    EXISTS (not NOT IN: a NULL key makes the comparison unknown, never TRUE). A semi join on equalities alone is
    Spark SQL's IN subquery instead (what DataFusion writes for `x IN (SELECT ...)`, TPC-H q18, q20): Spark
    infers from an IN, not from an EXISTS, the same IN on the other side of an equi-join. None for any other
    join."""
    negated = _EXISTS.get(rel.type)
    if negated is None or not parts or rel.HasField("post_join_filter"):
        return None
    if not (left.can_defer() and right.can_defer()):  # correlated inputs: the join's own checks apply
        return None
    if any(contains(c, alg.Expression.Subquery) or reference_levels(c) - {0} for c in parts):
        return None
    comparisons = [join_comparison(cx, c, left, right) for c in parts]
    host = left.materialized()
    if not negated and all(c is not None and c.op == "=" for c in comparisons):
        needles = [c.outer for c in comparisons if c is not None]
        if all(host.columns().count(n) == 1 for n in needles):
            inner = [c.right if c.outer == c.left else c.left for c in comparisons if c is not None]
            return spark_in(cx, host, needles, right, inner)
    return spark_exists(cx, host, right, comparisons, negated)


def _semi_onto_unique(
    cx: SubstraitConsumer,
    rel: JoinRel,
    left: Relation,
    right: Relation,
    parts: list[tuple[alg.Expression, str]],
    path: str,
    outer: Scope | None,
) -> Relation | None:
    """A LEFT SEMI join whose condition equates every column of a unique key of the right input
    (`unique_keys.keyed`) with left values, as an INNER join keeping the left columns: each left row matches at
    most one right row, so the rows are the semi join's. It is the join Spark SQL makes of a correlated scalar
    subquery compared with a left value, which DataFusion writes as a semi join onto its grouped aggregate (TPC-H
    q02, q17, q20). None for any other join."""
    if rel.type != JoinRel.JOIN_TYPE_LEFT_SEMI or not parts or rel.HasField("post_join_filter"):
        return None
    if not (left.can_defer() and right.can_defer()):
        return None
    if any(contains(c, alg.Expression.Subquery) or reference_levels(c) - {0} for c, _ in parts):
        return None
    shape = keyed(rel.right)
    if shape is None or shape.key is None or shape.width != len(right.names):
        return None
    width = len(left.names)
    keys = [right_key_of_equality(cx, c, width) for c, _ in parts]
    on_key = [part for part, k in zip(parts, keys, strict=True) if k in shape.key]
    equated = {k for k in keys if k in shape.key}
    read = {f - width for c, _ in parts for f in record_fields(c) if f >= width}
    # Reading only key columns is an IN or EXISTS, which Spark SQL runs as a semi join (TPC-H q18): kept.
    if not shape.key <= equated or read <= shape.key:
        return None
    others = [part for part in parts if part not in on_key]
    # Spark SQL's order: the comparison with the subquery's value (its filter, pushed into the join) before
    # the correlation's equalities.
    cond = _conjunction(cx, others + on_key, [])
    # The subquery's columns in its own order (a Project Spark folds into the aggregate, as for the SQL text).
    out = join_inputs(cx, left, right.materialized(), JoinRel.JOIN_TYPE_INNER, cond, None, [], path, outer)
    return out.select_positions(range(width), cx.names)


def condition_subquery(rel: Any, path: str) -> Iterator[tuple[str, str]]:
    """The refusal of a lateral or physical join whose condition or post-join filter holds a subquery, as
    (feature, path) (`join_inputs` refuses it when translating)."""
    fields = rel.DESCRIPTOR.fields_by_name
    for name in ("expression", "residual_expression", "post_join_filter"):
        if name in fields and rel.HasField(name) and contains(getattr(rel, name), alg.Expression.Subquery):
            yield SUBQUERY_IN_CONDITION, path
            return


def _conjunction(cx: SubstraitConsumer, parts: list[tuple[alg.Expression, str]], extra: list[Column]) -> Condition:
    def condition(scope: Scope) -> Column | None:
        conds = [cx.expression(c, scope, p).col for c, p in parts] + extra
        return conjunction(conds)

    return condition


def _flag_one_side(
    cx: SubstraitConsumer,
    left: Relation,
    right: Relation,
    c: alg.Expression,
    path: str,
    outer: Scope | None,
    jt: JoinType,
) -> tuple[Relation, Relation, Column]:
    """A condition conjunct holding a subquery, of a join that is not INNER, as a boolean column of the one input
    it reads (its value is all the join condition needs from it)."""
    width = len(left.names)
    fields = record_fields(c)
    if all(f < width for f in fields):
        side, expr = 0, c
    elif all(f >= width for f in fields):
        side, expr = 1, shift_record_fields(c, -width)
    else:
        raise UnsupportedFeatureError(f"{TWO_SIDED_SUBQUERY} ({JoinRel.JoinType.Name(jt)})", path)
    host = (left, right)[side].materialized()
    # A join keeps a pair when its condition is TRUE; a MARK join also tells NULL from FALSE.
    truth = Truth.VALUE if jt in _MARKS else Truth.TRUE
    scope = Scope(host, outer, truth=predicate_truth(cx, expr, path, truth))
    value = cx.expression(expr, scope, path).col
    flag = cx.names.fresh()
    # The flag rides in the frame, not among the input's columns: the join's result keeps only those.
    flagged = host.with_df(scope.host().df.withColumn(flag, value))
    sides = [left, right]
    sides[side] = flagged
    return sides[0], sides[1], column(flag)


TWO_SIDED_SUBQUERY = "subquery in the condition of a join that is not INNER, reading both of its inputs"
SUBQUERY_IN_CONDITION = "subquery in the condition of a lateral or physical join (a JoinRel's condition may hold one)"


def join_inputs(
    cx: SubstraitConsumer,
    left: Relation,
    right: Relation,
    jt: JoinType,
    condition: Condition,
    post_join_filter: alg.Expression | None,
    expressions: list[alg.Expression],
    path: str,
    outer: Scope | None,
) -> Relation:
    """Join two translated inputs: `jt` a JoinRel join type, `condition` builds the match condition over both
    inputs' record, `expressions` are the plan's expressions `condition` and the post-join filter translate (a
    subquery in one is refused: JoinRel takes them apart first). Shared by JoinRel, the lateral join and the
    physical joins (`physical_join.py`)."""
    if jt == JoinRel.JOIN_TYPE_UNSPECIFIED:
        raise PlanInvalidError("join type unspecified", f"{path}.type")
    if any(contains(e, alg.Expression.Subquery) for e in expressions):
        raise UnsupportedFeatureError(SUBQUERY_IN_CONDITION, path)
    deferred = jt in _NULLABLE and left.can_defer() and right.can_defer()
    if deferred:
        # Pending projections stay pending through the join, except on a side the join may fill with NULLs
        # (materialised first: side_by_side then sees the frames the join will join) unless they only rename
        # columns (a NULL row's column is NULL under any name), and except one that computes a column.
        sides = [left, right]
        for side in _NULLABLE[jt]:
            if not _renames_only(sides[side]):
                sides[side] = sides[side].materialized()
        sides = [s.materialized() if _computes(cx, s) else s for s in sides]
        left, right = side_by_side(sides[0], sides[1])
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
                raise UnsupportedFeatureError(POST_FILTER_ON_SEMI_ANTI, f"{path}.post_join_filter")
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
        out, mark = mark_join(cx, left, right, cond)
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
    out = out.materialized()
    keep = [*out.names, *out.hidden]
    if list(out.df.columns) != keep:
        out = out.with_df(out.df.select(*[column(n) for n in keep]))
    return out


def _cartesian(left: DataFrame, right: DataFrame) -> DataFrame:
    """An inner join without a condition, as Spark SQL's `FROM a, b` (`crossJoin` makes a `Cross` join: the
    same rows, but a different join type in every plan above once the filter's equalities become its keys)."""
    return left.join(right)


def product(left: Relation, right: Relation) -> Relation:
    """The cartesian product of two uncorrelated relations, their pending projections still pending."""
    left, right = side_by_side(left, right)
    names, types = [*left.names, *right.names], [*left.types, *right.types]
    return beside(left, right, names, types, _cartesian(left.frame, right.frame))


def translate_cross(cx: SubstraitConsumer, rel: alg.CrossRel, path: str, outer: Scope | None) -> Relation:
    left = cx.rel(rel.left, f"{path}.left", outer)
    right = cx.rel(rel.right, f"{path}.right", outer)
    if left.can_defer() and right.can_defer():
        return product(left, right)
    df = _cartesian(left.materialized().df, right.materialized().df)
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
    return left.widened(df, right.names), first


def mark_join(cx: SubstraitConsumer, left: Relation, right: Relation, cond: Column | None) -> tuple[Relation, str]:
    """Left rows plus a boolean: whether some right row matches (NULL if none matches but one is unknown), for
    any condition (`marks.split_mark`). Returns the relation (left's columns, the mark hidden) and the mark."""
    tests = [cond if cond is not None else F.lit(True)]
    return _with_mark(cx, left, marks.split_mark(cx, left, right.df, [], tests, Truth.VALUE))


def _with_mark(cx: SubstraitConsumer, left: Relation, marked: Hosted) -> tuple[Relation, str]:
    """`left`'s columns and the mark, from the relation the mark was built over."""
    name = cx.names.fresh()
    df = marked.rel.materialized().df.select(*left.cols(), *left.hidden_cols(), marked.col.alias(name))
    return left.widened(df, [name]), name


# Comparison functions a MARK join condition may be made of, and their mirror image (a op b == b mirror(op) a).
_MARK_OPS = {
    "equal": (operator.eq, operator.eq),
    "not_equal": (operator.ne, operator.ne),
    "lt": (operator.lt, operator.gt),
    "gt": (operator.gt, operator.lt),
    "lte": (operator.le, operator.ge),
    "gte": (operator.ge, operator.le),
}
_MARKS = {JoinRel.JOIN_TYPE_LEFT_MARK: 0, JoinRel.JOIN_TYPE_RIGHT_MARK: 1}


def _comparison_mark(
    cx: SubstraitConsumer, rel: JoinRel, left: Relation, right: Relation, path: str, outer: Scope | None
) -> Relation | None:
    """A MARK join whose condition is equalities between the inputs (`x IN (...)`), or one comparison
    (`x op ANY (...)`): marked from the other input's distinct values and figures, with no join of all pairs.
    None for any other MARK join condition, or another join type."""
    host_side = _MARKS.get(rel.type)
    if host_side is None or not rel.HasField("expression") or rel.HasField("post_join_filter"):
        return None
    if contains(rel.expression, alg.Expression.Subquery) or reference_levels(rel.expression) - {0}:
        return None
    width = len(left.names)
    pairs, ops = [], set()
    for c, _ in conjunct_paths(cx, rel.expression, f"{path}.expression"):
        fn = c.scalar_function if c.WhichOneof("rex_type") == "scalar_function" else None
        ref = cx.extensions.functions.get(fn.function_reference) if fn is not None else None
        args = value_args(fn) if fn is not None else []
        if ref is None or ref.base not in _MARK_OPS or len(args) != 2:
            return None
        sides = [{f >= width for f in local_fields(a)} for a in args]
        if any(len(s) != 1 for s in sides) or sides[0] == sides[1]:
            return None
        first_host = sides[0] == {bool(host_side)}
        op, mirrored = _MARK_OPS[ref.base]
        ops.add(op if first_host else mirrored)
        pairs.append(args if first_host else args[::-1])
    if not pairs or (len(pairs) > 1 and ops != {operator.eq}):
        return None
    left, right = left.materialized(), right.materialized()
    if left.correlated() or right.correlated():
        return None  # join_inputs refuses it by name
    both = Scope(_concat(left, right), outer)
    p = f"{path}.expression"
    compared = [(cx.expression(h, both, p), cx.expression(o, both, p)) for h, o in pairs]
    if any(not comparable(h.type, o.type) for h, o in compared):
        return None  # the comparison function's own checks and coercions decide
    if ops == {operator.eq} and host_side == 0 and cx.mark_truth(path) in (Truth.TRUE, None):
        native = _spark_in_mark(cx, left, right, pairs, width)
        if native is not None:
            return native
    needles, values = [h.col for h, _ in compared], [o for _, o in compared]
    host, other = (left, right) if host_side == 0 else (right, left)
    names = [cx.names.fresh() for _ in values]
    body_df = other.df.select(*[v.col.alias(n) for v, n in zip(values, names, strict=True)])
    body = Relation(body_df, names, [v.type for v in values])
    out, mark = _with_mark(cx, host, marks.mark(cx, host, body, needles, ops.pop(), Truth.VALUE))
    return Relation(out.df, [*host.names, mark], [*host.types, T.BooleanType()])


def _spark_in_mark(
    cx: SubstraitConsumer, left: Relation, right: Relation, pairs: list[list[alg.Expression]], width: int
) -> Relation | None:
    """A LEFT MARK join on equalities of plain columns of one type, whose mark the plan reads only where TRUE
    counts (`SubstraitConsumer.mark_truth`: a filter's OR, DataFusion's decorrelated EXISTS / IN, TPC-DS q10,
    q35, q45), as Spark SQL's own IN subquery (`spark_subqueries.within`): Spark plans it as the ExistenceJoin it
    makes of the same SQL. Spark's is TRUE or FALSE where the mark may be NULL (a NULL key), which reads the
    same there; read as a value or under a NOT, the mark stays `marks.mark`'s exact one. None when the
    equalities are not of plain columns of one type."""
    fields = [(plain_field(h), plain_field(o)) for h, o in pairs]
    needles = [left.names[h] for h, _ in fields if h is not None and h < width]
    values = [right.names[o - width] for _, o in fields if o is not None and o >= width]
    if len(needles) != len(pairs) or len(values) != len(pairs):
        return None
    if any(left.columns().count(n) != 1 for n in needles) or any(right.columns().count(v) != 1 for v in values):
        return None
    left_types, right_types = (
        dict(zip(left.names, left.types, strict=True)),
        dict(zip(right.names, right.types, strict=True)),
    )
    if any(left_types[n] != right_types[v] for n, v in zip(needles, values, strict=True)):
        return None
    found = spark_subqueries.within(cx, needles, right.df, values)
    out, mark = _with_mark(cx, left, Hosted(left, found))
    return Relation(out.df, [*left.names, mark], [*left.types, T.BooleanType()])
