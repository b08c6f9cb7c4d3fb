"""ProjectRel: the input's columns followed by one column per expression."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import Column
from substrait import algebra_pb2 as alg

from ...errors import UnsupportedFeatureError
from ...types import family
from ...walk import contains, descendants, emit_mapping, plain_field, reference_levels
from ..functions import SCALAR
from ..magnitude import magnitude
from ..relation import Relation, column
from ..scope import Scope, Truth, Typed, Widened
from ..subqueries import predicate_truth

if TYPE_CHECKING:
    from ..consumer import SubstraitConsumer


def translate_project(cx: SubstraitConsumer, rel: alg.ProjectRel, path: str, outer: Scope | None) -> Relation:
    """The projection and its emit as one pending projection (see `Relation`), else as one `select`."""
    source = cx.rel(rel.input, f"{path}.input", outer)
    deferred = all(_deferrable(cx, e) for e in rel.expressions)
    if not deferred:
        source = source.materialized()
    scope = Scope(source, outer)
    exprs = []
    for i, e in enumerate(rel.expressions):
        p = f"{path}.expressions[{i}]"
        if source.correlated() and reference_levels(e) - {0}:
            raise UnsupportedFeatureError("outer reference in a projection of a correlated subquery", p)
        if not deferred:  # a CASE WHEN test reads only whether its predicate subqueries are TRUE
            scope.truth = predicate_truth(cx, e, p, Truth.VALUE)
        exprs.append(cx.expression(e, scope, p))
    # The spec's output is the input's columns followed by the expressions (DuckDB 1.1: expressions only).
    width = 0 if cx.quirks.project_outputs_expressions_only else len(source.names)
    total = width + len(exprs)
    mapping = emit_mapping(rel, total, path)
    new: dict[str, Column] = {}
    names, types, used = [], [], set()
    given = _given_names(cx, path, source)
    for i, m in enumerate(range(total) if mapping is None else mapping):
        same = m if m < width else _passed_through(rel.expressions[m - width], len(source.names))
        if same is not None and source.names[same] not in used:
            name = source.names[same]  # the input's column again (DataFusion projects each one so): no rename
        else:
            own = given[i] if same is None and i < len(given) else None
            name = own or cx.names.fresh()
            new[name] = source.col(m) if m < width else exprs[m - width].col
            if m >= width and plain_field(rel.expressions[m - width]) is None:
                cx.computed_columns.add(name)
                integer = _widened_integer(rel.expressions[m - width], source)
                if integer is not None:
                    cx.widened_integers[name] = Widened(new[name], integer)
                if family(exprs[m - width].type) == "float":
                    p = f"{path}.expressions[{m - width}]"
                    bound = magnitude(cx, rel.expressions[m - width], scope, p)
                    if bound is not None:
                        cx.column_bounds[name] = bound
        used.add(name)
        names.append(name)
        types.append(source.types[m] if m < width else exprs[m - width].type)
    if deferred:
        return source.project(names, types, new)
    hidden = source.carried(names)
    # Subquery joins may have widened scope.rel; select from it, then only the declared outputs remain.
    cols = [new[n].alias(n) if n in new else column(n) for n in names]
    df = scope.host().df.select(*cols, *[column(n) for n in hidden])
    return source.derive(df, names, types, hidden)


def _given_names(cx: SubstraitConsumer, path: str, source: Relation) -> list[str | None]:
    """The plan's output names for the root's columns this projection computes (by output position), as Spark
    SQL's projection names them; none that a column of its input's frame already has."""
    taken = {n.lower() for n in source.columns()}
    return [n if n is not None and n.lower() not in taken else None for n in cx.output_names.get(path, [])]


def _passed_through(e: alg.Expression, width: int) -> int | None:
    """The input column an expression is, when it is a plain reference to one."""
    i = plain_field(e)
    return i if i is not None and 0 <= i < width else None


def _widened_integer(e: alg.Expression, source: Relation) -> Typed | None:
    """The input's integer column that `e` casts to fp64, if it is such a cast (any failure behaviour: it cannot
    fail)."""
    if e.WhichOneof("rex_type") != "cast" or e.cast.type.WhichOneof("kind") != "fp64":
        return None
    i = _passed_through(e.cast.input, len(source.names))
    return Typed(source.col(i), source.types[i]) if i is not None and family(source.types[i]) == "int" else None


def _deferrable(cx: SubstraitConsumer, e: alg.Expression) -> bool:
    """An expression that may be evaluated where its column is used: it reads only its own input, holds no
    subquery or window function (Spark allows those only in a select), and calls only the consumer's own
    (deterministic) functions."""
    if reference_levels(e) - {0} or contains(e, alg.Expression.Subquery) or contains(e, alg.Expression.WindowFunction):
        return False
    return all(_builtin(cx, fn) for fn in descendants(e, alg.Expression.ScalarFunction))


def _builtin(cx: SubstraitConsumer, fn: alg.Expression.ScalarFunction) -> bool:
    ref = cx.extensions.functions.get(fn.function_reference)
    return ref is not None and cx.scalar_functions.get(ref.base) is SCALAR.get(ref.base)
