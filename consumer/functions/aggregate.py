"""Aggregate functions: Substrait base name -> Spark aggregate column builder.

A builder gets the call with its (already filtered, see `relations/aggregate.py`) arguments and whether the
invocation is DISTINCT; it returns one native Spark aggregate expression.
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from .call import Call
from .unsigned import UNSIGNED_AGGREGATE

AggregateHandler = Callable[[Call, bool], Column]


def _simple(fn: Callable[[Column], Column], distinct_fn: Callable[[Column], Column] | None = None) -> AggregateHandler:
    def build(c: Call, distinct: bool) -> Column:
        (x,) = c.arity(1).cols
        if distinct:
            if distinct_fn is None:
                raise c.unsupported("DISTINCT invocation")
            return distinct_fn(x)
        return fn(x)

    return build


def _distinct_irrelevant(fn: Callable[[Column], Column]) -> AggregateHandler:
    """min/max/any_value/bool_*: DISTINCT does not change the result."""
    return _simple(fn, fn)


def _count(c: Call, distinct: bool) -> Column:
    cols = c.cols
    if not cols:
        if distinct:
            raise c.unsupported("count(DISTINCT *)")
        return F.count(F.lit(1))
    if distinct:
        return F.count_distinct(*cols)
    if len(cols) > 1:
        raise c.unsupported("count over several arguments without DISTINCT")
    return F.count(cols[0])


def _avg(c: Call, distinct: bool) -> Column:
    (x,) = c.arity(1).cols
    if distinct:
        return F.sum_distinct(x) / F.count_distinct(x)
    return F.avg(x)


def _by_distribution(sample: Callable[[Column], Column], population: Callable[[Column], Column]) -> AggregateHandler:
    def build(c: Call, distinct: bool) -> Column:
        if distinct:
            raise c.unsupported("DISTINCT invocation")
        mode = c.option("distribution", ("SAMPLE", "POPULATION"), "SAMPLE")
        (x,) = c.arity(1).cols
        return (sample if mode == "SAMPLE" else population)(x)

    return build


def _string_agg(c: Call, distinct: bool) -> Column:
    x, sep = (*c.arity(1, 2).cols, F.lit(","))[:2]  # DuckDB writes string_agg(x): separator ','
    items = F.collect_set(x) if distinct else F.collect_list(x)
    return F.when(F.size(items) > 0, F.call_function("array_join", items, sep))  # separator may be a column


AGGREGATE: dict[str, AggregateHandler] = {
    "sum": _simple(F.sum, F.sum_distinct),
    "sum0": _simple(lambda x: F.coalesce(F.sum(x), F.lit(0))),
    "avg": _avg,
    "min": _distinct_irrelevant(F.min),
    "max": _distinct_irrelevant(F.max),
    "count": _count,
    "any_value": _distinct_irrelevant(lambda x: F.first(x, ignorenulls=True)),
    "first": _distinct_irrelevant(lambda x: F.first(x, ignorenulls=True)),
    "median": _simple(F.median),
    "mode": _simple(F.mode),
    "std_dev": _by_distribution(F.stddev_samp, F.stddev_pop),
    "variance": _by_distribution(F.var_samp, F.var_pop),
    "bool_and": _distinct_irrelevant(F.bool_and),
    "bool_or": _distinct_irrelevant(F.bool_or),
    "approx_count_distinct": _distinct_irrelevant(F.approx_count_distinct),
    "approx_distinct": _distinct_irrelevant(F.approx_count_distinct),
    "product": _simple(F.product),
    "string_agg": _string_agg,
    **UNSIGNED_AGGREGATE,
}
