"""Comparison and boolean functions (functions_comparison.yaml, functions_boolean.yaml): three-valued, as Spark."""

from __future__ import annotations

import functools
import operator

from pyspark.sql import Column
from pyspark.sql import functions as F

from .build import binary, sql, unary, variadic
from .call import Call, Handler


def _between(c: Call) -> Column:
    x, lo, hi = c.arity(3).cols
    return (x >= lo) & (x <= hi)


def _is_distinct_from(c: Call) -> Column:
    a, b = c.arity(2).cols
    return ~a.eqNullSafe(b)


def _xor(c: Call) -> Column:
    a, b = c.arity(2).cols
    return (a | b) & ~(a & b)


def _is_nan(c: Call) -> Column:
    """NULL for NULL (Spark's isnan says false)."""
    (x,) = c.arity(1).cols
    return F.when(x.isNotNull(), F.isnan(x))


def _null_if_any_null(name: str) -> Handler:
    """Substrait's least/greatest are NULL when any argument is; Spark's skip NULLs (the `_skip_null` variants)."""

    def build(c: Call) -> Column:
        cols = c.cols
        any_null = functools.reduce(operator.or_, [x.isNull() for x in cols])
        return F.when(~any_null, F.call_function(name, *cols))

    return build


def _truth_test(value: bool, negated: bool) -> Handler:
    """is_true / is_false / is_not_true / is_not_false: never NULL (NULL is neither true nor false)."""

    def build(c: Call) -> Column:
        (x,) = c.arity(1).cols
        test = F.coalesce(x == F.lit(value), F.lit(False))
        return ~test if negated else test

    return build


COMPARISON: dict[str, Handler] = {
    "equal": binary(operator.eq),
    "not_equal": binary(operator.ne),
    "lt": binary(operator.lt),
    "lte": binary(operator.le),
    "gt": binary(operator.gt),
    "gte": binary(operator.ge),
    "between": _between,
    "is_null": unary(lambda x: x.isNull()),
    "is_not_null": unary(lambda x: x.isNotNull()),
    "is_distinct_from": _is_distinct_from,
    "is_not_distinct_from": binary(lambda a, b: a.eqNullSafe(b)),
    "coalesce": lambda c: F.coalesce(*c.cols),
    "nullif": sql("nullif"),
    "least": _null_if_any_null("least"),
    "greatest": _null_if_any_null("greatest"),
    "least_skip_null": sql("least"),
    "greatest_skip_null": sql("greatest"),
    # boolean (three-valued, as Spark's AND/OR/NOT)
    "and": variadic(operator.and_),
    "or": variadic(operator.or_),
    "not": unary(operator.invert),
    "xor": _xor,
    "and_not": binary(lambda a, b: a & ~b),
    "is_true": _truth_test(True, False),
    "is_false": _truth_test(False, False),
    "is_not_true": _truth_test(True, True),
    "is_not_false": _truth_test(False, True),
    "is_nan": _is_nan,
    "isnan": _is_nan,  # DataFusion's name
}
