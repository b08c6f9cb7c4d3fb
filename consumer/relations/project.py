"""ProjectRel: the input's columns followed by one column per expression."""

from __future__ import annotations

from typing import TYPE_CHECKING

from substrait import algebra_pb2 as alg

from ..errors import PlanInvalidError, UnsupportedFeatureError
from ..relation import Relation, column
from ..scope import Scope
from ..walk import reference_levels

if TYPE_CHECKING:
    from ..consumer import SubstraitConsumer


def translate_project(cx: SubstraitConsumer, rel: alg.ProjectRel, path: str, outer: Scope | None) -> Relation:
    """One `select` for the projection and its emit: unselected outputs are never built."""
    source = cx.rel(rel.input, f"{path}.input", outer)
    scope = Scope(source, outer)
    exprs = []
    for i, e in enumerate(rel.expressions):
        p = f"{path}.expressions[{i}]"
        if source.correlated() and reference_levels(e) - {0}:
            raise UnsupportedFeatureError("outer reference in a projection of a correlated subquery", p)
        exprs.append(cx.expression(e, scope, p))
    # The spec's output is the input's columns followed by the expressions (DuckDB 1.1: expressions only).
    width = 0 if cx.quirks.project_outputs_expressions_only else len(source.names)
    total = width + len(exprs)
    mapping = list(rel.common.emit.output_mapping) if rel.common.WhichOneof("emit_kind") == "emit" else range(total)
    cols, names, types, used = [], [], [], set()
    for m in mapping:
        if not 0 <= m < total:
            raise PlanInvalidError(
                f"emit position {m} out of range: the relation has {total} columns", f"{path}.common.emit"
            )
        if m < width and source.names[m] not in used:
            name, col = source.names[m], source.col(m)
        else:
            name = cx.names.fresh()
            col = (source.col(m) if m < width else exprs[m - width].col).alias(name)
        used.add(name)
        cols.append(col)
        names.append(name)
        types.append(source.types[m] if m < width else exprs[m - width].type)
    hidden = source.carried(names)
    # Subquery joins may have widened scope.rel; select from it, then only the declared outputs remain.
    df = scope.rel.df.select(*cols, *[column(n) for n in hidden])
    return source.derive(df, names, types, hidden)
