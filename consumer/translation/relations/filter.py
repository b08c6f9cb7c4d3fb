"""FilterRel, with subquery conjuncts turned into joins and correlated conjuncts pulled up."""

from __future__ import annotations

import functools
import operator
from dataclasses import replace
from typing import TYPE_CHECKING

from pyspark.sql import types as T
from substrait import algebra_pb2 as alg

from ...errors import UnsupportedFeatureError
from ...walk import contains, local_fields, plain_field, record_fields, reference_levels, value_args
from ..functions import lookup
from ..functions.comparison import COMPARISON
from ..relation import ColumnComparison, Pending, Projection, Relation, column
from ..scope import Scope, Truth
from ..subqueries import conjunct_paths, predicate_truth, try_filter_conjunct

Subquery = alg.Expression.Subquery

if TYPE_CHECKING:
    from ..consumer import SubstraitConsumer


def translate_filter(cx: SubstraitConsumer, rel: alg.FilterRel, path: str, outer: Scope | None) -> Relation:
    source = cx.rel(rel.input, f"{path}.input", outer)
    if not rel.HasField("condition"):
        return source
    return filter_by(cx, source, conjunct_paths(cx, rel.condition, f"{path}.condition"), outer)


def filter_by(
    cx: SubstraitConsumer, source: Relation, parts: list[tuple[alg.Expression, str]], outer: Scope | None
) -> Relation:
    """`source` filtered by conjuncts (with their paths): over its frame, a pending projection kept pending, when
    none holds a subquery."""
    if (source.projection is not None or source.can_defer()) and not any(contains(c, Subquery) for c, _ in parts):
        return _filter_frame(cx, source, parts, outer)
    return filter_relation(cx, source.materialized(), parts, outer)


def filter_relation(
    cx: SubstraitConsumer, source: Relation, parts: list[tuple[alg.Expression, str]], outer: Scope | None
) -> Relation:
    """Filter a materialized relation by conjuncts (with their paths) that may hold subqueries, as Spark SQL
    does: the conjuncts without subqueries first (the equi-conditions of a filter above a cross reach the join
    below), then the predicate subqueries as semi and anti joins, then what reads subqueries deeper inside."""
    scope = Scope(source, outer)
    plain, nested, pending = [], [], list(source.pending)
    for c, p in parts:
        levels = reference_levels(c)
        if levels - {0} and not scope.native_levels(levels):
            pending.append(correlated_conjunct(cx, c, scope, levels, p))
        elif contains(c, Subquery):
            nested.append((c, p))
        else:
            plain.append(cx.expression(c, scope, p).col)
    # The relation each step builds is the next one's host: the plain conjuncts' filter, then each subquery
    # conjunct's semi or anti join, or the joins its predicate subqueries read (what the expression's scope took).
    out = source
    if plain:
        out = out.with_df(out.df.filter(functools.reduce(operator.and_, plain)))
    conds = []
    for c, p in nested:
        joined = try_filter_conjunct(cx, c, Scope(out, outer), p)
        if joined is not None:
            out = joined
            continue
        over = Scope(out, outer, truth=predicate_truth(cx, c, p, Truth.TRUE))
        conds.append(cx.expression(c, over, p).col)
        out = over.rel
    df = out.df.filter(functools.reduce(operator.and_, conds)) if conds else out.df
    if not pending and source.can_defer():
        # What subquery joins appended stays in the frame until an operation needs this relation's columns.
        return Relation(df, source.names, source.types, projection=Projection({}, out.columns()))
    # Drop what subquery joins appended; keep the input's columns and the correlation state.
    correlation = replace(source.correlation, pending=tuple(pending), hidden=())
    hidden = correlation.carried(source.names)
    keep = [*source.names, *hidden]
    if list(df.columns) != keep:
        df = df.select(*[column(n) for n in keep])
    return Relation(df, source.names, source.types, replace(correlation, hidden=hidden))


def _filter_frame(cx: SubstraitConsumer, source: Relation, parts, outer: Scope | None) -> Relation:
    """Conjuncts without subqueries filter the frame; a pending projection stays pending. Correlated
    conjuncts become pending predicates over the columns by name (they are applied above, after it)."""
    local = Scope(source, outer)
    conds, pending = [], list(source.pending)
    for c, p in parts:
        levels = reference_levels(c)
        if levels - {0} and not local.native_levels(levels):
            pending.append(correlated_conjunct(cx, c, Scope(source.named(), outer), levels, p))
        else:
            conds.append(cx.expression(c, local, p).col)
    frame = source.frame.filter(functools.reduce(operator.and_, conds)) if conds else source.frame
    return source.over(frame, pending)


def correlated_conjunct(cx: SubstraitConsumer, c: alg.Expression, scope: Scope, levels: set[int], path: str) -> Pending:
    """A conjunct reading the enclosing query: translated now, applied where the subquery meets its host."""
    if max(levels) > 1:
        raise UnsupportedFeatureError(
            "outer reference more than one subquery level out from a correlated predicate", path
        )
    if contains(c, alg.Expression.Subquery):
        raise UnsupportedFeatureError("subquery inside a correlated predicate", path)
    inner = tuple(dict.fromkeys(scope.rel.names[i] for i in local_fields(c)))
    position = equality_key_position(cx, c)
    equality = scope.rel.names[position] if position is not None else None
    return Pending(cx.expression(c, scope, path).col, inner, equality, column_comparison(cx, c, scope))


# Comparison handlers Spark SQL writes with an operator, by that operator.
_SQL_OPERATORS = {"equal": "=", "not_equal": "<>", "lt": "<", "lte": "<=", "gt": ">", "gte": ">="}


def column_comparison(cx: SubstraitConsumer, c: alg.Expression, scope: Scope) -> ColumnComparison | None:
    """`c` as a comparison of a plain column of `scope.rel` with a plain column of the enclosing query (one level
    out), both of one type and named as they stand in their frames; None for any other predicate."""
    compared = _sql_comparison(cx, c)
    if compared is None:
        return None
    op, args = compared
    host = scope.up(1)
    sides = [
        _column_of(scope.rel, a, local=True) or _column_of(host.rel if host else None, a, local=False) for a in args
    ]
    if any(s is None for s in sides):
        return None
    (left, left_type, left_local), (right, right_type, right_local) = sides  # type: ignore[misc]
    if left_local == right_local or left_type != right_type:
        return None
    return ColumnComparison(left, op, right, right if left_local else left)


def join_comparison(
    cx: SubstraitConsumer, c: alg.Expression, left: Relation, right: Relation
) -> ColumnComparison | None:
    """`c`, a conjunct of a join condition over `left`'s then `right`'s columns, as a comparison of a plain column
    of `right` with a plain column of `left` (the outer one), both of one type; None for any other predicate.
    Names as the relations name them (`spark_exists` refuses an outer one its frame does not hold)."""
    compared = _sql_comparison(cx, c)
    if compared is None:
        return None
    op, args = compared
    width = len(left.names)
    fields = [plain_field(a) for a in args]
    sides = []
    for f in fields:
        if f is None:
            return None
        rel, i = (left, f) if f < width else (right, f - width)
        if not 0 <= i < len(rel.names):
            return None
        sides.append((rel.names[i], rel.types[i], rel is right))
    (a_name, a_type, a_right), (b_name, b_type, b_right) = sides
    if a_right == b_right or a_type != b_type:
        return None
    return ColumnComparison(a_name, op, b_name, b_name if a_right else a_name)


def right_key_of_equality(cx: SubstraitConsumer, c: alg.Expression, width: int) -> int | None:
    """For a join conjunct `right column = <left expression>` (either side; `width` left columns), the right
    column's position in the right input; None for any other predicate."""
    compared = _sql_comparison(cx, c)
    if compared is None or compared[0] != "=":
        return None
    args = compared[1]
    for mine, other in (args, args[::-1]):
        f = plain_field(mine)
        if (
            f is not None
            and f >= width
            and reference_levels(other) <= {0}
            and max(record_fields(other), default=-1) < width
        ):
            return f - width
    return None


def _sql_comparison(cx: SubstraitConsumer, c: alg.Expression) -> tuple[str, list[alg.Expression]] | None:
    """(Spark SQL operator, its two arguments) for a call of a standard comparison function, else None."""
    if c.WhichOneof("rex_type") != "scalar_function":
        return None
    fn = c.scalar_function
    ref = cx.extensions.functions.get(fn.function_reference)
    op = _SQL_OPERATORS.get(ref.base) if ref is not None else None
    args = value_args(fn)
    if op is None or ref is None or len(args) != 2 or lookup(cx.scalar_functions, ref) is not COMPARISON[ref.base]:
        return None
    return op, list(args)


def _column_of(rel: Relation | None, e: alg.Expression, local: bool) -> tuple[str, T.DataType, bool] | None:
    """(name, type, local) of the frame column `e` reads in `rel` (a plain field reference, local or one level
    out as `local` says, that is no pending expression), or None."""
    if rel is None or e.WhichOneof("rex_type") != "selection":
        return None
    sel = e.selection
    if local and plain_field(e) is None:
        return None
    if not local:
        if sel.WhichOneof("root_type") != "outer_reference" or sel.outer_reference.steps_out != 1:
            return None
        if sel.direct_reference.struct_field.HasField("child"):
            return None
    if sel.direct_reference.WhichOneof("reference_type") != "struct_field":
        return None
    i = sel.direct_reference.struct_field.field
    if not 0 <= i < len(rel.names):
        return None
    name = rel.names[i]
    if rel.projection is not None and name in rel.projection.exprs:
        return None
    return name, rel.types[i], local


def equality_key_position(cx, c: alg.Expression) -> int | None:
    """For `local_column = <outer expression>` (either side), the local column's input position.

    An aggregate above can absorb such a predicate as a grouping key. Needs only `cx.extensions`, so the
    static analysis (`analyze.py`) asks the same question the translation does.
    """
    if c.WhichOneof("rex_type") != "scalar_function":
        return None
    fn = c.scalar_function
    ref = cx.extensions.functions.get(fn.function_reference)
    if ref is None or ref.base not in ("equal", "is_not_distinct_from"):
        return None
    args = value_args(fn)
    if len(args) != 2:
        return None
    for mine, other in (args, args[::-1]):
        position = plain_field(mine)
        if reference_levels(other) == {1} and position is not None:
            return position
    return None
