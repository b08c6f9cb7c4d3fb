"""Subqueries, decorrelated into joins Spark can optimize.

PySpark 3.5's DataFrame API has no outer-reference column, so a subquery body is translated with its
correlated predicates pulled up (`Relation.pending`, see `relations/filter.py`) and then joined to the
relation that hosts the subquery expression:

- a top-level conjunct of a filter — under identity casts to boolean and NOTs — : EXISTS / IN / ANY become a
  left semi join, NOT EXISTS / NOT IN / ALL a left anti join (NOT IN and ALL null-aware, `c OR c IS NULL`,
  exactly as Spark SQL rewrites them);
- a correlated scalar subquery over an aggregate: a left join on the absorbed correlation keys;
- an uncorrelated scalar subquery: Spark's own scalar subquery over a per-run temp view;
- a predicate anywhere else (under OR, NOT, CASE, in a projection or a join condition): a boolean column of
  the host (`marks.py`), as much of its three-valued answer as the place it stands in reads (`predicate_truth`).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T
from substrait import algebra_pb2 as alg

from ..errors import PlanInvalidError, UnsupportedFeatureError
from ..walk import children, descendants, value_args
from . import marks, spark_subqueries
from .functions import COMPARISONS
from .relation import ColumnComparison, Relation, all_of, column, conjunction, quote, side_by_side
from .scope import Hosted, Scope, Truth, Typed

if TYPE_CHECKING:
    from ..loading.extensions import Extensions
    from ..loading.producers import Quirks
    from .consumer import SubstraitConsumer


class PlanReader(Protocol):
    """What the plan-only checks here read of their caller: the consumer, `analyze`'s Context and the lineage
    walker all have both, so `validate` and lineage refuse exactly what the consumer refuses."""

    @property
    def extensions(self) -> Extensions: ...

    @property
    def quirks(self) -> Quirks: ...


Subquery = alg.Expression.Subquery
_CMP = Subquery.SetComparison
_OPS: dict[int, marks.Comparison] = {
    _CMP.COMPARISON_OP_EQ: operator.eq,
    _CMP.COMPARISON_OP_NE: operator.ne,
    _CMP.COMPARISON_OP_LT: operator.lt,
    _CMP.COMPARISON_OP_GT: operator.gt,
    _CMP.COMPARISON_OP_LE: operator.le,
    _CMP.COMPARISON_OP_GE: operator.ge,
}
_NEGATED: dict[int, int] = {
    _CMP.COMPARISON_OP_EQ: _CMP.COMPARISON_OP_NE,
    _CMP.COMPARISON_OP_NE: _CMP.COMPARISON_OP_EQ,
    _CMP.COMPARISON_OP_LT: _CMP.COMPARISON_OP_GE,
    _CMP.COMPARISON_OP_GE: _CMP.COMPARISON_OP_LT,
    _CMP.COMPARISON_OP_GT: _CMP.COMPARISON_OP_LE,
    _CMP.COMPARISON_OP_LE: _CMP.COMPARISON_OP_GT,
}


def conjuncts(cx: PlanReader, e: alg.Expression) -> list[alg.Expression]:
    """Split a condition on top-level AND calls."""
    return [c for c, _ in conjunct_paths(cx, e, "")]


def conjunct_paths(cx: PlanReader, e: alg.Expression, path: str) -> list[tuple[alg.Expression, str]]:
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


_PREDICATES = ("set_predicate", "in_predicate", "set_comparison")


def _base(cx: SubstraitConsumer, e: alg.Expression) -> str | None:
    """The base name of the function `e` calls (None: not a call, or an undeclared one)."""
    if e.WhichOneof("rex_type") != "scalar_function":
        return None
    ref = cx.extensions.functions.get(e.scalar_function.function_reference)
    return ref.base if ref is not None else None


def _is_boolean_cast(e: alg.Expression) -> bool:
    return e.WhichOneof("rex_type") == "cast" and e.cast.type.WhichOneof("kind") == "bool"


def peel_predicate(cx: SubstraitConsumer, e: alg.Expression, path: str) -> tuple[bool, alg.Expression, str] | None:
    """`e` as (negated, predicate subquery, its path) when it is one under NOTs and casts to boolean (identities
    on a predicate: Isthmus writes `cast(<IN subquery> as boolean)`); None otherwise."""
    negated = False
    while True:
        if _is_boolean_cast(e):
            e, path = e.cast.input, f"{path}.cast.input"
            continue
        if _base(cx, e) == "not":
            fn = e.scalar_function
            args = [(i, a.value) for i, a in enumerate(fn.arguments) if a.WhichOneof("arg_type") == "value"]
            if len(args) == 1:
                i, e = args[0]
                path = f"{path}.scalar_function.arguments[{i}].value"
                negated = not negated
                continue
        break
    if e.WhichOneof("rex_type") == "subquery" and e.subquery.WhichOneof("subquery_type") in _PREDICATES:
        return negated, e, path
    return None


def predicate_truth(cx: SubstraitConsumer, e: alg.Expression, path: str, truth: Truth) -> dict[str, Truth]:
    """How much of each predicate subquery's answer `e` reads, standing in `truth` (see `Truth`), by the plan
    path its translation gets (`<expression path>.subquery`). Predicates not listed need their exact value."""
    out: dict[str, Truth] = {}
    _truth(cx, e, path, truth, out)
    return out


def _truth(cx: SubstraitConsumer, e: alg.Expression, path: str, truth: Truth, out: dict[str, Truth]) -> None:
    kind = e.WhichOneof("rex_type")
    p = f"{path}.{kind}"
    base = _base(cx, e)
    if kind == "subquery":
        out[p] = truth
    elif base in ("and", "or", "not"):
        inner = truth.negated() if base == "not" else truth
        for i, a in enumerate(e.scalar_function.arguments):
            if a.WhichOneof("arg_type") == "value":
                _truth(cx, a.value, f"{p}.arguments[{i}].value", inner, out)
    elif _is_boolean_cast(e):
        _truth(cx, e.cast.input, f"{p}.input", truth, out)
    elif kind in ("if_then", "switch_expression"):
        body = getattr(e, kind)
        for i, clause in enumerate(body.ifs):
            if kind == "if_then":  # a CASE WHEN test picks its branch only when TRUE
                _truth(cx, getattr(clause, "if"), f"{p}.ifs[{i}].if", Truth.TRUE, out)
            _truth(cx, clause.then, f"{p}.ifs[{i}].then", truth, out)
        if body.HasField("else"):
            _truth(cx, getattr(body, "else"), f"{p}.else", truth, out)
        if kind == "switch_expression":
            _truth(cx, body.match, f"{p}.match", Truth.VALUE, out)
    elif kind is not None:
        _values(cx, getattr(e, kind), p, out)


def _values(cx: SubstraitConsumer, msg, path: str, out: dict[str, Truth]) -> None:
    """The expressions inside `msg` (not inside relations: subquery bodies have their own filters) stand in
    VALUE, but a CASE WHEN test among them."""
    for child, p in children(msg, path):
        if isinstance(child, alg.Expression):
            _truth(cx, child, p, Truth.VALUE, out)
        elif not isinstance(child, alg.Rel):
            _values(cx, child, p, out)


# --- body translation --------------------------------------------------------------------------------------


def _body(
    cx: SubstraitConsumer, rel: alg.Rel, scope: Scope, path: str, semi: bool = False, applied: bool = True
) -> tuple[Relation, Relation]:
    """The host the subquery is joined to (`scope.rel`) and the subquery's relation. For a `semi` (or anti)
    join, which reads the body's columns only in its condition, an uncorrelated body keeps a pending projection
    (see `Relation`), the two side by side; otherwise it is applied, unless not `applied` is asked for (the
    caller applies it where it needs to: Spark's own EXISTS reads a body whose columns are only renamed from its
    frame)."""
    refuse_unmarked_correlation(cx, rel, path)
    body = cx.rel(rel, path, outer=scope)
    if semi and body.can_defer():
        return side_by_side(scope.rel, body)
    return scope.rel, body.materialized() if applied else body


def refuse_unmarked_correlation(cx: PlanReader, rel: alg.Rel, path: str) -> None:
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


def _pending(body: Relation) -> list[Column]:
    return [p.cond for p in body.pending]


def _semi_or_anti(host: Relation, body: Relation, cond: Column | None, how: str) -> Relation:
    host = host.materialized()
    return host.with_df(host.df.join(body.frame, on=cond, how=how))


# --- filter conjuncts: semi and anti joins -----------------------------------------------------------------


def try_filter_conjunct(cx: SubstraitConsumer, e: alg.Expression, scope: Scope, path: str) -> Relation | None:
    """A top-level filter conjunct that is a (negated) predicate subquery, as a semi/anti join of `scope.rel`:
    the joined relation, or None for any other conjunct."""
    peeled = peel_predicate(cx, e, path)
    if peeled is None:
        return None
    negated, target, path = peeled
    sq = target.subquery
    kind = sq.WhichOneof("subquery_type")
    p = f"{path}.subquery.{kind}"
    if kind == "set_predicate":
        if sq.set_predicate.predicate_op != Subquery.SetPredicate.PREDICATE_OP_EXISTS:
            return None
        host, body = _predicate_body(cx, sq.set_predicate.tuples, scope, p, semi=True, applied=False)
        native = _spark_exists(cx, host, body, negated)
        if native is not None:
            return native
        body = body.materialized()
        return _semi_or_anti(host, body, conjunction(_pending(body)), "left_anti" if negated else "left_semi")
    if kind == "in_predicate":
        needles = [cx.expression(n, scope, f"{p}.needles[{i}]") for i, n in enumerate(sq.in_predicate.needles)]
        host, body = _predicate_body(cx, sq.in_predicate.haystack, scope, p, "haystack", semi=True)
        native = None if negated else _spark_in(cx, sq.in_predicate, host, body, p)
        if native is not None:
            return native
        match = _match(needles, body, operator.eq, p)
        return _apply_any(host, body, match, negated)
    sc = sq.set_comparison
    if sc.reduction_op not in (_CMP.REDUCTION_OP_ANY, _CMP.REDUCTION_OP_ALL):
        raise PlanInvalidError("set comparison without ANY or ALL", p)
    left = cx.expression(sc.left, scope, f"{p}.left")
    host, body = _predicate_body(cx, sc.right, scope, p, "right", semi=True)
    is_all = sc.reduction_op == _CMP.REDUCTION_OP_ALL
    op = _comparison(sc.comparison_op, p)
    if is_all:
        # x op ALL S  ==  NOT (x (not op) ANY S), exactly in three-valued logic.
        match = _match([left], body, _OPS[_NEGATED[sc.comparison_op]], p)
        return _apply_any(host, body, match, not negated)
    return _apply_any(host, body, _match([left], body, op, p), negated)


def _spark_in(
    cx: SubstraitConsumer, e: Subquery.InPredicate, host: Relation, body: Relation, path: str
) -> Relation | None:
    """An uncorrelated `columns IN (subquery)` as Spark SQL's own IN subquery over a per-run temp view, or None
    when it is not one (`_in_needles`).

    Spark rewrites its IN subquery into the same left semi join, but after inferring filters from constraints:
    a semi join built here gets not-null filters on both sides (and no IN on the other side of an equi-join)
    that Spark SQL's plan for the same WHERE clause has not."""
    names = _in_needles(e, host, body)
    return None if names is None else spark_in(cx, host, names, body, body.names)


def _in_needles(e: Subquery.InPredicate, host: Relation, body: Relation) -> list[str] | None:
    """The host columns an uncorrelated IN compares, when they are plain columns of the host's frame of the
    subquery's column types; else None."""
    if body.pending or body.hidden:
        return None
    names = [_host_column(host, n) for n in e.needles]
    if any(n is None for n in names) or len(names) != len(body.names):
        return None
    types = dict(zip(host.names, host.types, strict=True))
    if any(types[n] != t for n, t in zip(names, body.types, strict=True)):  # type: ignore[index]
        return None
    return [n for n in names if n is not None]


def spark_in(
    cx: SubstraitConsumer, host: Relation, needles: Sequence[str], body: Relation, columns: Sequence[str]
) -> Relation:
    """`host` filtered by Spark SQL's `needles IN (SELECT columns FROM <a per-run temp view of body>)`: host frame
    columns against body columns, pairwise of one type. Also the explicit semi JoinRel on equalities
    (`relations/join.py`), which is what an IN subquery means."""
    return host.over(host.frame.filter(_in_sql(cx, needles, body, columns)))


def _in_sql(cx: SubstraitConsumer, needles: Sequence[str], body: Relation, columns: Sequence[str]) -> Column:
    return spark_subqueries.within(cx, needles, body.materialized().df, columns)


def _spark_exists(cx: SubstraitConsumer, host: Relation, body: Relation, negated: bool) -> Relation | None:
    """A correlated (NOT) EXISTS whose correlated predicates all compare a body column with a host column (see
    `Pending.comparison`) as Spark SQL's own EXISTS subquery over a per-run temp view of the body; None when it
    is not one. As for IN (`_spark_in`): Spark decorrelates it into the same semi or anti join, after inferring
    filters, so the plan is the one Spark SQL runs for the same WHERE clause."""
    return spark_exists(cx, host, body, [p.comparison for p in body.pending], negated)


def spark_exists(
    cx: SubstraitConsumer,
    host: Relation,
    body: Relation,
    comparisons: Sequence[ColumnComparison | None],
    negated: bool,
) -> Relation | None:
    """`host` filtered by Spark SQL's (NOT) EXISTS over a per-run temp view of `body`, where `comparisons` (each
    a body column against a host column) all hold; None when they cannot be written so (`_correlation_sql`). Also
    the explicit semi and anti JoinRels (`relations/join.py`)."""
    given = [c for c in comparisons if c is not None]
    read = _unrenamed(body, given) if given and len(given) == len(comparisons) else None
    computed = host.projection.exprs if host.projection is not None else {}
    if read is not None and all(
        c.outer in host.columns() and c.outer not in computed and host.columns().count(c.outer) == 1 for c in given
    ):
        # The body's columns only renamed: the subquery reads its frame, with no renaming Project (a table read
        # again keeps its own names there). Both sides qualified, as the names may be the same.
        alias = cx.names.fresh()
        aliased = host.over(host.frame.alias(alias))
        if spark_subqueries.has_api(body.frame):
            exists = spark_subqueries.correlated_exists(body.frame, given, negated, alias, read)
            return aliased.over(aliased.frame.filter(exists))
        view = cx.register_view(body.frame)
        qualified = " AND ".join(_qualified(c, view, alias, read) for c in given)
        exists = F.expr(f"{'NOT ' if negated else ''}EXISTS (SELECT 1 FROM {quote(view)} WHERE {qualified})")
        return aliased.over(aliased.frame.filter(exists))
    found = _exists_sql(cx, host, body, comparisons, negated, filtered=True)
    return None if found is None else found.rel.over(found.rel.frame.filter(found.col))


def _exists_sql(
    cx: SubstraitConsumer,
    host: Relation,
    body: Relation,
    comparisons: Sequence[ColumnComparison | None],
    negated: bool,
    filtered: bool = False,
) -> Hosted | None:
    """Spark SQL's (NOT) EXISTS over `body` (materialized: its columns and the hidden ones the predicates read),
    correlated with `host` by `comparisons`, and the host it is a column of; None when they cannot be written so
    (`_correlation_sql`). `filtered`: the host is filtered by it at once; then, with Spark 4's API
    (`spark_subqueries`), the host is aliased and its columns qualified — an outer column by name alone binds to a
    column of that name anywhere under the body (a table read again). A value (under an OR, a CASE) keeps the temp
    view: the host it is a column of may be aliased again by the next one, which hides this alias."""
    body = body.materialized()
    where = _correlation_sql(host, body.columns(), comparisons)
    if where is None:
        return None
    if filtered and spark_subqueries.has_api(body.df):
        alias = cx.names.fresh()
        given = [c for c in comparisons if c is not None]
        aliased = host.over(host.frame.alias(alias))
        return Hosted(aliased, spark_subqueries.correlated_exists(body.df, given, negated, alias))
    view = cx.register_view(body.df)
    return Hosted(host, F.expr(f"{'NOT ' if negated else ''}EXISTS (SELECT 1 FROM {quote(view)} WHERE {where})"))


def _exists_value(cx: SubstraitConsumer, host: Relation, body: Relation) -> Hosted | None:
    """EXISTS as a value (under an OR, a NOT, a CASE, in a projection) as Spark SQL's own EXISTS over a per-run
    temp view of the body, where every correlated predicate compares a body column with a host column: Spark
    plans it as the ExistenceJoin it makes of the same SQL (EXISTS is TRUE or FALSE, never NULL); None when the
    correlation cannot be written so (`_correlation_sql`) or there is none (`marks` then)."""
    if not body.pending:
        return None
    return _exists_sql(cx, host, body, [p.comparison for p in body.pending], negated=False)


def _correlation_sql(
    host: Relation, inner: Sequence[str], comparisons: Sequence[ColumnComparison | None]
) -> str | None:
    """The WHERE clause of a Spark SQL subquery over a view with columns `inner`, correlated with `host` by
    `comparisons` (each a view column against a host column, by quoted name); None when they cannot be written
    so: none, one that is not a plain column comparison, a host column that is computed, that the view also names
    (it would bind to the view's column inside the subquery) or that the host's frame names twice."""
    if not comparisons or any(c is None for c in comparisons):
        return None
    frame_columns = set(host.columns())
    computed = host.projection.exprs if host.projection is not None else {}
    outer = host.columns()
    for c in comparisons:
        assert c is not None
        if c.outer not in frame_columns or c.outer in computed or c.outer in inner or outer.count(c.outer) != 1:
            return None
    return " AND ".join(c.sql() for c in comparisons if c is not None)


def _unrenamed(body: Relation, comparisons: Sequence[ColumnComparison]) -> dict[str, str] | None:
    """The frame column each comparison's body column is when the body's pending projection only renames them
    (each one once in the frame), else None."""
    if body.projection is None:
        return None
    frame = [n.lower() for n in body.columns()]
    read = {}
    for c in comparisons:
        inner = c.right if c.left == c.outer else c.left
        column_name = body.frame_column(inner)
        if column_name is None or frame.count(column_name.lower()) != 1:
            return None
        read[inner] = column_name
    return read


def _qualified(c: ColumnComparison, view: str, outer: str, read: Mapping[str, str]) -> str:
    """`c` in SQL with the body's column read from `view` and the host's from the relation aliased `outer`."""

    def side(name: str) -> str:
        return f"{quote(outer)}.{quote(name)}" if name == c.outer else f"{quote(view)}.{quote(read[name])}"

    return f"{side(c.left)} {c.op} {side(c.right)}"


def _host_column(host: Relation, e: alg.Expression) -> str | None:
    """The frame column of `host` that `e` reads when `e` is a plain field reference, else None."""
    if not _bare_field(e) or e.selection.WhichOneof("root_type") == "expression":
        return None
    ref = e.selection.direct_reference
    if ref.WhichOneof("reference_type") != "struct_field" or ref.struct_field.HasField("child"):
        return None
    i = ref.struct_field.field
    if not 0 <= i < len(host.names):
        return None
    name = host.names[i]
    computed = host.projection is not None and name in host.projection.exprs
    return None if computed or name not in host.columns() else name


def _comparison(op: int, path: str) -> marks.Comparison:
    if op not in _OPS:
        raise PlanInvalidError("set comparison without a comparison operator", path)
    return _OPS[op]


def _match(needles: list[Typed], body: Relation, op, path: str) -> Column:
    _check_width(needles, body, path)
    return functools.reduce(operator.and_, [op(n.col, body.col(i)) for i, n in enumerate(needles)])


def _apply_any(host: Relation, body: Relation, match: Column, negated: bool) -> Relation:
    """`x op ANY body` as a semi join of `host`; its negation as a null-aware anti join."""
    if negated:
        match = match | match.isNull()
    cond = conjunction([match, *_pending(body)])
    return _semi_or_anti(host, body, cond, "left_anti" if negated else "left_semi")


# --- subqueries as values ----------------------------------------------------------------------------------


def subquery(cx: SubstraitConsumer, e: Subquery, scope: Scope, path: str) -> Typed:
    """A subquery as a value over `scope.rel`: the translators below return the relation their joins widen with
    the answer (`Hosted`), and the scope takes it (`Scope.took`), the one place an expression's host changes."""
    kind = e.WhichOneof("subquery_type")
    if kind == "scalar":
        built, typ = _scalar(cx, e.scalar, scope, f"{path}.scalar")
        return Typed(scope.took(built), typ)
    truth = scope.truth.get(path, Truth.VALUE)
    if kind == "set_predicate":
        if e.set_predicate.predicate_op != Subquery.SetPredicate.PREDICATE_OP_EXISTS:
            raise UnsupportedFeatureError("UNIQUE subquery predicate", f"{path}.set_predicate")
        host, body = _predicate_body(cx, e.set_predicate.tuples, scope, f"{path}.set_predicate")
        native = _exists_value(cx, host, body)
        return _boolean(scope.took(native or marks.mark(cx, host, body, [], operator.eq, truth)))
    if kind == "in_predicate":
        p = f"{path}.in_predicate"
        needles = [cx.expression(n, scope, f"{p}.needles[{i}]") for i, n in enumerate(e.in_predicate.needles)]
        host, body = _predicate_body(cx, e.in_predicate.haystack, scope, p, "haystack")
        _check_width(needles, body, p)
        names = _in_needles(e.in_predicate, host, body) if truth is Truth.TRUE else None
        if names is not None:
            # Where only TRUE counts (under an AND / OR of a filter), Spark SQL's own IN: the ExistenceJoin
            # Spark plans for the same SQL.
            return _boolean(scope.took(Hosted(host, _in_sql(cx, names, body, body.names))))
        return _boolean(scope.took(marks.mark(cx, host, body, [n.col for n in needles], operator.eq, truth)))
    if kind == "set_comparison":
        p = f"{path}.set_comparison"
        sc = e.set_comparison
        if sc.reduction_op not in (_CMP.REDUCTION_OP_ANY, _CMP.REDUCTION_OP_ALL):
            raise PlanInvalidError("set comparison without ANY or ALL", p)
        op = _comparison(sc.comparison_op, p)
        left = cx.expression(sc.left, scope, f"{p}.left")
        host, body = _predicate_body(cx, sc.right, scope, p, "right")
        _check_width([left], body, p)
        if sc.reduction_op == _CMP.REDUCTION_OP_ALL:
            # x op ALL S  ==  NOT (x (not op) ANY S); the ANY stands under that NOT.
            negated = _OPS[_NEGATED[sc.comparison_op]]
            return _boolean(~scope.took(marks.mark(cx, host, body, [left.col], negated, truth.negated())))
        return _boolean(scope.took(marks.mark(cx, host, body, [left.col], op, truth)))
    raise PlanInvalidError("subquery with nothing set", path)


def _boolean(col: Column) -> Typed:
    return Typed(col, T.BooleanType())


def _predicate_body(
    cx: SubstraitConsumer,
    rel: alg.Rel,
    scope: Scope,
    path: str,
    field: str = "tuples",
    semi: bool = False,
    applied: bool = True,
) -> tuple[Relation, Relation]:
    """The host and the body of the predicate subquery at `path` (`field`: where it holds its relation)."""
    host, body = _body(cx, rel, scope, f"{path}.{field}", semi, applied)
    if body.keyed:
        raise UnsupportedFeatureError(KEYED_PREDICATE, path)
    return host, body


# A correlated aggregate without grouping keys yields one row for every outer row, even over no rows (where the
# decorrelated body has none, and a HAVING above it may remove that row): which one cannot be told apart here.
KEYED_PREDICATE = (
    "predicate subquery (EXISTS, IN, ANY, ALL) over an aggregate of the correlated rows without grouping keys"
)


def _check_width(needles: list[Typed], body: Relation, path: str) -> None:
    if len(needles) != len(body.names):
        raise PlanInvalidError(f"{len(needles)} value(s) compared with a subquery of {len(body.names)} column(s)", path)


def _scalar(cx: SubstraitConsumer, sc: Subquery.Scalar, scope: Scope, path: str) -> tuple[Hosted, T.DataType]:
    """A scalar subquery's value over the host (`scope.rel`, widened by the join a correlated one needs), and its
    type."""
    host, body = _body(cx, sc.input, scope, f"{path}.input")
    if len(body.names) != 1:
        raise PlanInvalidError(f"scalar subquery returns {len(body.names)} columns, not 1", path)
    if not body.pending:
        one = body.df.select(body.col(0)) if body.hidden else body.df  # df: its one column
        return Hosted(host, spark_subqueries.scalar(cx, one, body.names[0])), body.types[0]
    count_output = body.count_bug and body.keyed and outputs_count(cx, sc.input)
    if body.count_bug and not count_output:
        raise UnsupportedFeatureError(
            "correlated scalar subquery computing over COUNT (its empty-group value is not NULL)", path
        )
    value = body.names[0]
    host = host.materialized()
    if body.keyed:
        # The body holds its one column and the correlation keys (hidden): joined as it is.
        df = host.df.join(body.df, on=conjunction(_pending(body)), how="left")
        col = column(value)
        if count_output:
            # A key with no rows finds no group: COUNT over no rows is 0, not the left join's NULL.
            col = F.coalesce(col, F.lit(0).cast(body.types[0]))
        return Hosted(host.widened(df, [value]), col), body.types[0]
    if all(p.equality is not None for p in body.pending):
        return _single_by_keys(cx, host, body, path), body.types[0]
    from .relations.join import single_join

    joined, value_name = single_join(cx, host, body, conjunction(_pending(body)), path)
    return Hosted(joined, column(value_name)), body.types[0]


def _single_by_keys(cx: SubstraitConsumer, host: Relation, body: Relation, path: str) -> Hosted:
    """A correlated scalar subquery without an aggregate, correlated by equalities: the body's rows counted per
    key (more than one is SQL's error) and left-joined on the keys, a hash join giving each host row one row."""
    inner = marks.key_names(body.pending)
    rows, value = cx.names.fresh(), cx.names.fresh()
    right = body.df.groupBy(*[column(n) for n in inner]).agg(
        F.count(F.lit(1)).alias(rows), F.first(body.col(0)).alias(value)
    )
    widened = marks.join_left(host, right, all_of(_pending(body)), [rows, value], inner)
    message = F.lit(f"more than one row returned by a subquery used as a value (at {path})")
    return Hosted(widened, F.when(column(rows) > 1, F.raise_error(message)).otherwise(column(value)))


_COUNTS = {"count", "approx_count_distinct", "approx_distinct"}


def outputs_count(cx: PlanReader, rel: alg.Rel) -> bool:
    """Whether a subquery's only output column is, unchanged, a COUNT measure of an aggregate without keys.

    Projections and emits that pass the column through are looked through; anything computed from it is
    not (its value over no rows is unknown here).
    """
    position = 0
    while True:
        kind = rel.WhichOneof("rel_type")
        body: Any = getattr(rel, kind) if kind else None  # the relation message, of any kind
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


def _width(cx: PlanReader, rel: alg.Rel) -> int | None:
    """The number of output columns of an aggregate or of a projection over one (None: not worked out here)."""
    kind = rel.WhichOneof("rel_type")
    body: Any = getattr(rel, kind) if kind else None  # the relation message, of any kind
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
