"""Subqueries, decorrelated into joins Spark can optimize.

PySpark 3.5's DataFrame API has no outer-reference column, so a subquery body is translated with its
correlated predicates pulled up (`Relation.pending`, see `relations/filter.py`) and then joined to the
relation that hosts the subquery expression:

- a top-level conjunct of a filter: EXISTS / IN / ANY become a left semi join, NOT EXISTS / NOT IN / ALL a
  left anti join (NOT IN and ALL null-aware, `c OR c IS NULL`, exactly as Spark SQL rewrites them);
- a correlated scalar subquery over an aggregate: a left join on the absorbed correlation keys;
- an uncorrelated scalar subquery: Spark's own scalar subquery over a per-run temp view;
- anywhere else: a mark join (`relations/join.py`) producing a three-valued boolean.
"""

from __future__ import annotations

import functools
import operator
from typing import TYPE_CHECKING

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T
from substrait import algebra_pb2 as alg

from .errors import PlanInvalidError, UnsupportedFeatureError
from .functions import COMPARISONS
from .relation import Relation, column, quote, side_by_side
from .scope import Scope, Typed
from .walk import descendants, value_args

if TYPE_CHECKING:
    from .consumer import SubstraitConsumer

Subquery = alg.Expression.Subquery
_CMP = Subquery.SetComparison
_OPS = {
    _CMP.COMPARISON_OP_EQ: operator.eq,
    _CMP.COMPARISON_OP_NE: operator.ne,
    _CMP.COMPARISON_OP_LT: operator.lt,
    _CMP.COMPARISON_OP_GT: operator.gt,
    _CMP.COMPARISON_OP_LE: operator.le,
    _CMP.COMPARISON_OP_GE: operator.ge,
}
_NEGATED = {
    _CMP.COMPARISON_OP_EQ: _CMP.COMPARISON_OP_NE,
    _CMP.COMPARISON_OP_NE: _CMP.COMPARISON_OP_EQ,
    _CMP.COMPARISON_OP_LT: _CMP.COMPARISON_OP_GE,
    _CMP.COMPARISON_OP_GE: _CMP.COMPARISON_OP_LT,
    _CMP.COMPARISON_OP_GT: _CMP.COMPARISON_OP_LE,
    _CMP.COMPARISON_OP_LE: _CMP.COMPARISON_OP_GT,
}


def conjuncts(cx: SubstraitConsumer, e: alg.Expression) -> list[alg.Expression]:
    """Split a condition on top-level AND calls."""
    return [c for c, _ in conjunct_paths(cx, e, "")]


def conjunct_paths(cx: SubstraitConsumer, e: alg.Expression, path: str) -> list[tuple[alg.Expression, str]]:
    """The conjuncts of a condition with their own plan paths (so errors point inside the AND)."""
    if e.WhichOneof("rex_type") == "scalar_function":
        fn = e.scalar_function
        ref = cx.extensions.functions.get(fn.function_reference)
        if ref is not None and ref.base == "and":
            p = f"{path}.scalar_function"
            return [
                c
                for i, a in enumerate(fn.arguments)
                if a.WhichOneof("arg_type") == "value"
                for c in conjunct_paths(cx, a.value, f"{p}.arguments[{i}].value")
            ]
    return [(e, path)]


def _negated_subquery(cx: SubstraitConsumer, e: alg.Expression) -> alg.Expression | None:
    """The subquery under `not(<subquery>)`, if that is what `e` is."""
    if e.WhichOneof("rex_type") != "scalar_function":
        return None
    fn = e.scalar_function
    ref = cx.extensions.functions.get(fn.function_reference)
    if ref is None or ref.base != "not":
        return None
    args = value_args(fn)
    if len(args) == 1 and args[0].WhichOneof("rex_type") == "subquery":
        return args[0]
    return None


# --- body translation --------------------------------------------------------------------------------------


def _body(cx: SubstraitConsumer, rel: alg.Rel, scope: Scope, path: str, semi: bool = False) -> Relation:
    """The subquery's relation. For a `semi` (or anti) join, which reads the body's columns only in its
    condition, an uncorrelated body keeps a pending projection (see `Relation`); otherwise it is applied."""
    refuse_unmarked_correlation(cx, rel, path)
    body = cx.rel(rel, path, outer=scope)
    if semi and body.can_defer():
        return side_by_side(scope.rel, body)[1]
    return body.materialized()


def refuse_unmarked_correlation(cx: SubstraitConsumer, rel: alg.Rel, path: str) -> None:
    """ibis-substrait never writes outer references: a correlated column is a plain field reference into the
    enclosing query's record, indistinguishable from a column of the subquery's own input. Reading it either
    way may run a different query, so such plans are refused rather than guessed at."""
    if not cx.quirks.unmarked_outer_references:
        return
    for msg in descendants(rel, alg.FilterRel):
        for c in conjuncts(cx, msg.condition):
            if c.WhichOneof("rex_type") != "scalar_function":
                continue
            fn = c.scalar_function
            ref = cx.extensions.functions.get(fn.function_reference)
            args = value_args(fn)
            if ref and ref.base in COMPARISONS and len(args) == 2 and all(_bare_field(a) for a in args):
                raise PlanInvalidError(
                    "ibis-substrait plan compares two plain field references inside a subquery: the producer "
                    "writes correlated columns without outer references, so which side is the enclosing query's "
                    "column cannot be known",
                    path,
                )


def _bare_field(e: alg.Expression) -> bool:
    return e.WhichOneof("rex_type") == "selection" and e.selection.WhichOneof("root_type") != "outer_reference"


def _and(conds: list[Column]) -> Column | None:
    return functools.reduce(operator.and_, conds) if conds else None


def _pending(body: Relation) -> list[Column]:
    return [p.cond for p in body.pending]


def _semi_or_anti(scope: Scope, body: Relation, cond: Column | None, how: str) -> None:
    scope.rel = scope.rel.with_df(scope.rel.df.join(body.frame, on=cond, how=how))


# --- filter conjuncts: semi and anti joins -----------------------------------------------------------------


def try_filter_conjunct(cx: SubstraitConsumer, e: alg.Expression, scope: Scope, path: str) -> bool:
    """Apply a top-level filter conjunct that is a (negated) predicate subquery as a semi/anti join."""
    negated = False
    target = e
    inner = _negated_subquery(cx, e)
    if inner is not None:
        negated, target = True, inner
        path = f"{path}.scalar_function.arguments[0].value"
    if target.WhichOneof("rex_type") != "subquery":
        return False
    sq = target.subquery
    kind = sq.WhichOneof("subquery_type")
    p = f"{path}.subquery.{kind}"
    if kind == "set_predicate":
        if sq.set_predicate.predicate_op != Subquery.SetPredicate.PREDICATE_OP_EXISTS:
            return False
        body = _body(cx, sq.set_predicate.tuples, scope, f"{p}.tuples", semi=True)
        _semi_or_anti(scope, body, _and(_pending(body)), "left_anti" if negated else "left_semi")
        return True
    if kind == "in_predicate":
        needles = [cx.expression(n, scope, f"{p}.needles[{i}]") for i, n in enumerate(sq.in_predicate.needles)]
        body = _body(cx, sq.in_predicate.haystack, scope, f"{p}.haystack", semi=True)
        match = _match(needles, body, operator.eq, p)
        _apply_any(scope, body, match, negated)
        return True
    if kind == "set_comparison":
        sc = sq.set_comparison
        if sc.reduction_op not in (_CMP.REDUCTION_OP_ANY, _CMP.REDUCTION_OP_ALL):
            raise PlanInvalidError("set comparison without ANY or ALL", p)
        left = cx.expression(sc.left, scope, f"{p}.left")
        body = _body(cx, sc.right, scope, f"{p}.right", semi=True)
        is_all = sc.reduction_op == _CMP.REDUCTION_OP_ALL
        op = _comparison(sc.comparison_op, p)
        if is_all:
            # x op ALL S  ==  NOT (x (not op) ANY S), exactly in three-valued logic.
            match = _match([left], body, _OPS[_NEGATED[sc.comparison_op]], p)
            _apply_any(scope, body, match, not negated)
        else:
            _apply_any(scope, body, _match([left], body, op, p), negated)
        return True
    return False


def _comparison(op: int, path: str):
    if op not in _OPS:
        raise PlanInvalidError("set comparison without a comparison operator", path)
    return _OPS[op]


def _match(needles: list[Typed], body: Relation, op, path: str) -> Column:
    if len(needles) != len(body.names):
        raise PlanInvalidError(f"{len(needles)} value(s) compared with a subquery of {len(body.names)} column(s)", path)
    return functools.reduce(operator.and_, [op(n.col, body.col(i)) for i, n in enumerate(needles)])


def _apply_any(scope: Scope, body: Relation, match: Column, negated: bool) -> None:
    """`x op ANY body` as a semi join; its negation as a null-aware anti join."""
    if negated:
        match = match | match.isNull()
    cond = _and([match, *_pending(body)])
    _semi_or_anti(scope, body, cond, "left_anti" if negated else "left_semi")


# --- subqueries as values ----------------------------------------------------------------------------------


def subquery(cx: SubstraitConsumer, e: Subquery, scope: Scope, path: str) -> Typed:
    kind = e.WhichOneof("subquery_type")
    if kind == "scalar":
        return _scalar(cx, e.scalar, scope, f"{path}.scalar")
    if kind == "set_predicate":
        if e.set_predicate.predicate_op != Subquery.SetPredicate.PREDICATE_OP_EXISTS:
            raise UnsupportedFeatureError("UNIQUE subquery predicate", f"{path}.set_predicate")
        body = _body(cx, e.set_predicate.tuples, scope, f"{path}.set_predicate.tuples")
        return _mark(cx, scope, body, _and(_pending(body)), three_valued=False)
    if kind == "in_predicate":
        p = f"{path}.in_predicate"
        needles = [cx.expression(n, scope, f"{p}.needles[{i}]") for i, n in enumerate(e.in_predicate.needles)]
        body = _body(cx, e.in_predicate.haystack, scope, f"{p}.haystack")
        return _mark(cx, scope, body, _and([_match(needles, body, operator.eq, p), *_pending(body)]), True)
    if kind == "set_comparison":
        p = f"{path}.set_comparison"
        sc = e.set_comparison
        left = cx.expression(sc.left, scope, f"{p}.left")
        body = _body(cx, sc.right, scope, f"{p}.right")
        if sc.reduction_op == _CMP.REDUCTION_OP_ALL:
            negated_op = _OPS[_NEGATED[sc.comparison_op]] if sc.comparison_op in _NEGATED else None
            if negated_op is None:
                raise PlanInvalidError("set comparison without a comparison operator", p)
            cond = _and([_match([left], body, negated_op, p), *_pending(body)])
            mark = _mark(cx, scope, body, cond, three_valued=True)
            return Typed(~mark.col, mark.type)
        if sc.reduction_op != _CMP.REDUCTION_OP_ANY:
            raise PlanInvalidError("set comparison without ANY or ALL", p)
        cond = _and([_match([left], body, _comparison(sc.comparison_op, p), p), *_pending(body)])
        return _mark(cx, scope, body, cond, three_valued=True)
    raise PlanInvalidError("subquery with nothing set", path)


def _mark(cx: SubstraitConsumer, scope: Scope, body: Relation, cond: Column | None, three_valued: bool) -> Typed:
    from .relations.join import mark_join

    joined, mark_name = mark_join(cx, scope.rel, body, cond, three_valued)
    scope.rel = joined
    return Typed(column(mark_name), T.BooleanType())


def _scalar(cx: SubstraitConsumer, sc: Subquery.Scalar, scope: Scope, path: str) -> Typed:
    body = _body(cx, sc.input, scope, f"{path}.input")
    if len(body.names) != 1:
        raise PlanInvalidError(f"scalar subquery returns {len(body.names)} columns, not 1", path)
    if not body.pending:
        view = cx.register_view(body.df.select(body.col(0)) if body.hidden else body.df)  # df: its one column
        col = F.expr(f"(SELECT {quote(body.names[0])} FROM {quote(view)})")
        return Typed(col, body.types[0])
    count_output = body.count_bug and body.keyed and _count_output(cx, sc.input)
    if body.count_bug and not count_output:
        raise UnsupportedFeatureError(
            "correlated scalar subquery computing over COUNT (its empty-group value is not NULL)", path
        )
    value = body.names[0]
    if body.keyed:
        host = scope.rel
        # The body holds its one column and the correlation keys (hidden): joined as it is.
        joined = host.df.join(body.df, on=_and(_pending(body)), how="left")
        scope.rel = Relation(
            joined, host.names, host.types, [*host.hidden, value], host.pending, host.keyed, host.count_bug
        )
        col = column(value)
        if count_output:
            # A key with no rows finds no group: COUNT over no rows is 0, not the left join's NULL.
            col = F.coalesce(col, F.lit(0).cast(body.types[0]))
        return Typed(col, body.types[0])
    from .relations.join import single_join

    joined, value_name = single_join(cx, scope.rel, body, _and(_pending(body)), path)
    scope.rel = joined
    return Typed(column(value_name), body.types[0])


_COUNTS = {"count", "approx_count_distinct", "approx_distinct"}


def _count_output(cx: SubstraitConsumer, rel: alg.Rel) -> bool:
    """Whether a subquery's only output column is, unchanged, a COUNT measure of an aggregate without keys.

    Projections and emits that pass the column through are looked through; anything computed from it is
    not (its value over no rows is unknown here).
    """
    position = 0
    while True:
        kind = rel.WhichOneof("rel_type")
        body = getattr(rel, kind) if kind else None
        common = getattr(body, "common", None)
        if common is not None and common.WhichOneof("emit_kind") == "emit":
            mapping = list(common.emit.output_mapping)
            if position >= len(mapping):
                return False
            position = mapping[position]
        if kind == "project":
            n_input = 0 if cx.quirks.project_outputs_expressions_only else _width(cx, body.input)
            if n_input is None:
                return False
            if position >= n_input:
                e = body.expressions[position - n_input]
                ref = e.selection if e.WhichOneof("rex_type") == "selection" else None
                if ref is None or ref.WhichOneof("root_type") not in ("root_reference", None):
                    return False
                seg = ref.direct_reference
                if seg.WhichOneof("reference_type") != "struct_field" or seg.struct_field.HasField("child"):
                    return False
                position = seg.struct_field.field
            rel = body.input
            continue
        if kind != "aggregate":
            return False
        if len(body.grouping_expressions):
            return False
        if not 0 <= position < len(body.measures):
            return False
        m = body.measures[position]
        ref = cx.extensions.functions.get(m.measure.function_reference)
        return ref is not None and ref.base in _COUNTS


def _width(cx: SubstraitConsumer, rel: alg.Rel) -> int | None:
    """The number of output columns of an aggregate or of a projection over one (None: not worked out here)."""
    kind = rel.WhichOneof("rel_type")
    body = getattr(rel, kind) if kind else None
    common = getattr(body, "common", None)
    if common is not None and common.WhichOneof("emit_kind") == "emit":
        return len(common.emit.output_mapping)
    if kind == "aggregate":
        keys = len(body.grouping_expressions)
        return keys + len(body.measures) + (1 if len(body.groupings) > 1 else 0)
    if kind == "project":
        inner = _width(cx, body.input)
        return None if inner is None else inner + len(body.expressions)
    return None
