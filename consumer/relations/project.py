"""ProjectRel: the input's columns followed by one column per expression."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import functions as F
from substrait import algebra_pb2 as alg

from ..errors import UnsupportedFeatureError
from ..relation import column, Relation, quote
from ..scope import Scope
from ..walk import reference_levels

if TYPE_CHECKING:
    from ..consumer import SubstraitConsumer


def translate_project(cx: SubstraitConsumer, rel: alg.ProjectRel, path: str, outer: Scope | None) -> Relation:
    source = cx.rel(rel.input, f"{path}.input", outer)
    scope = Scope(source, outer)
    new_cols, new_names, new_types = [], [], []
    for i, e in enumerate(rel.expressions):
        p = f"{path}.expressions[{i}]"
        if source.correlated() and reference_levels(e) - {0}:
            raise UnsupportedFeatureError("outer reference in a projection of a correlated subquery", p)
        typed = cx.expression(e, scope, p)
        name = cx.names.fresh()
        new_cols.append(typed.col.alias(name))
        new_names.append(name)
        new_types.append(typed.type)
    kept_cols, kept_types = source.cols(), list(source.types)
    names = [*source.names, *new_names]
    if cx.quirks.project_outputs_expressions_only:
        kept_cols, kept_types, names = [], [], list(new_names)
    hidden = source.carried(names)
    # Subquery joins may have widened scope.rel; select from it, then only the declared outputs remain.
    df = scope.rel.df.select(*kept_cols, *new_cols, *[column(n) for n in hidden])
    return source.derive(df, names, [*kept_types, *new_types], hidden)
