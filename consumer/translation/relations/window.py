"""ConsistentPartitionWindowRel: the input's columns followed by one column per window function, all
functions sharing the relation's partitioning and ordering (each with its own frame)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from substrait import algebra_pb2 as alg

from ...errors import UnsupportedFeatureError
from ..relation import Relation, column
from ..scope import Scope
from ..windows import CORRELATED, ordering, window_column

if TYPE_CHECKING:
    from ..consumer import SubstraitConsumer


SUBQUERY_INSIDE = "subquery inside a window relation's expressions"


def translate_window(
    cx: SubstraitConsumer, rel: alg.ConsistentPartitionWindowRel, path: str, outer: Scope | None
) -> Relation:
    source = cx.rel(rel.input, f"{path}.input", outer).materialized()  # window columns are selected, not deferred
    if source.correlated():
        raise UnsupportedFeatureError(CORRELATED, path)
    scope = Scope(source, outer)
    partitions = [
        cx.expression(e, scope, f"{path}.partition_expressions[{i}]").col
        for i, e in enumerate(rel.partition_expressions)
    ]
    order = ordering(cx, rel.sorts, scope, f"{path}.sorts")
    functions = [
        window_column(cx, fn, partitions, order, scope, f"{path}.window_functions[{i}]")
        for i, fn in enumerate(rel.window_functions)
    ]
    if scope.rel is not source:
        raise UnsupportedFeatureError(SUBQUERY_INSIDE, path)
    names = [*source.names, *(cx.names.fresh() for _ in functions)]
    types = [*source.types, *(f.type for f in functions)]
    new = [f.col.alias(n) for f, n in zip(functions, names[len(source.names) :], strict=True)]
    df = source.df.select(*[column(n) for n in source.names], *new, *source.hidden_cols())
    return source.derive(df, names, types, list(source.hidden))
