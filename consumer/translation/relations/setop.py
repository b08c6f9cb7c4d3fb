"""SetRel: all eight operations with the spec's multiset semantics (NULL matches NULL, as in Spark)."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from substrait import algebra_pb2 as alg

from ...errors import PlanInvalidError, UnsupportedFeatureError
from ..relation import Relation, column, union_all
from ..scope import Scope

if TYPE_CHECKING:
    from ..consumer import SubstraitConsumer

SetRel = alg.SetRel


def _minus_multiset(
    cx: SubstraitConsumer, primary: DataFrame, others: list[DataFrame], cols: Sequence[str]
) -> DataFrame:
    """Each primary row m - min(n_1..n_k) times: drop rows present in *all* secondaries."""
    tag = cx.names.fresh()
    tagged = [df.withColumn(tag, F.lit(i)) for i, df in enumerate([primary, *others])]
    counts = [F.sum(F.when(F.col(tag) == i, 1).otherwise(0)).alias(f"{tag}_{i}") for i in range(len(tagged))]
    grouped = functools.reduce(union_all, tagged).groupBy(*[column(c) for c in cols]).agg(*counts)
    least = F.least(*[F.col(f"{tag}_{i}") for i in range(1, len(tagged))]) if len(tagged) > 2 else F.col(f"{tag}_1")
    times = F.col(f"{tag}_0") - least
    return (
        grouped.filter(times > 0)
        .select(*[column(c) for c in cols], F.explode(F.array_repeat(F.lit(1), times.cast("int"))).alias(tag))
        .drop(tag)
    )


def translate_set(cx: SubstraitConsumer, rel: SetRel, path: str, outer: Scope | None) -> Relation:
    inputs = [cx.rel(r, f"{path}.inputs[{i}]", outer) for i, r in enumerate(rel.inputs)]
    if len(inputs) < 2:
        raise PlanInvalidError(f"set operation with {len(inputs)} input(s), needs at least 2", path)
    first = inputs[0]
    for i, r in enumerate(inputs):
        if r.correlated():
            raise UnsupportedFeatureError("set operation inside a correlated subquery", f"{path}.inputs[{i}]")
        if len(r.names) != len(first.names):
            raise PlanInvalidError(
                f"set input {i} has {len(r.names)} columns, input 0 has {len(first.names)}", f"{path}.inputs[{i}]"
            )
    # Positional: rename every input's columns to the first input's names.
    inputs = [r.materialized() for r in inputs]
    first = inputs[0]
    dfs = [first.df.select(*first.cols())] + [
        r.df.select(*[r.col(k).alias(first.names[k]) for k in range(len(r.names))]) for r in inputs[1:]
    ]
    primary, others = dfs[0], dfs[1:]
    op = rel.op
    if op == SetRel.SET_OP_UNION_ALL:
        df = functools.reduce(union_all, dfs)
    elif op == SetRel.SET_OP_UNION_DISTINCT:
        df = functools.reduce(union_all, dfs).distinct()
    elif op == SetRel.SET_OP_MINUS_PRIMARY:
        df = functools.reduce(lambda a, b: a.subtract(b), others, primary)
    elif op == SetRel.SET_OP_MINUS_PRIMARY_ALL:
        df = functools.reduce(lambda a, b: a.exceptAll(b), others, primary)
    elif op == SetRel.SET_OP_MINUS_MULTISET:
        df = _minus_multiset(cx, primary, others, first.names)
    elif op == SetRel.SET_OP_INTERSECTION_PRIMARY:
        df = primary.intersect(functools.reduce(union_all, others))
    elif op == SetRel.SET_OP_INTERSECTION_MULTISET:
        df = functools.reduce(lambda a, b: a.intersect(b), others, primary)
    elif op == SetRel.SET_OP_INTERSECTION_MULTISET_ALL:
        df = functools.reduce(lambda a, b: a.intersectAll(b), others, primary)
    else:
        raise PlanInvalidError("set operation unspecified", f"{path}.op")
    if op in (SetRel.SET_OP_UNION_ALL, SetRel.SET_OP_UNION_DISTINCT):
        for name in first.names:  # its columns hold the other inputs' values too: the first's bounds do not hold
            cx.column_bounds.pop(name, None)
    return Relation(df, list(first.names), list(first.types))
