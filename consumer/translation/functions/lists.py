"""List and set functions (functions_list.yaml, functions_set.yaml).

Higher-order functions take a lambda argument (a `lambdas.FunctionValue`, see consumer/translation/lambdas.py) and
become Spark's own higher-order functions, whose lambda bodies are native Catalyst expressions.
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ...errors import PlanInvalidError
from ...types import cast, family
from ..lambdas import FunctionValue
from .call import Call, Handler
from .options import Option, OptionRule, always

NAN_EQUALITY = Option("nan_equality", ("NAN_IS_NAN", "NAN_IS_NOT_NAN"), "NAN_IS_NAN")


def _index_in(c: Call) -> Column:
    """0-based position of the first equal element, NULL when absent; Spark's equality finds NaN (NAN_IS_NAN)."""
    needle, haystack = c.arity(2).values
    pos = F.call_function("array_position", haystack.col, needle.col)  # F.array_position wants a Python value
    found = F.when(pos > 0, pos - 1).cast(T.LongType())
    mode = c.read(NAN_EQUALITY)
    if mode == "NAN_IS_NOT_NAN" and family(needle.type) == "float":
        return F.when(~F.isnan(needle.col), found)
    return found


def _function_argument(c: Call, i: int) -> FunctionValue | None:
    """The lambda at value argument `i`, or None for a NULL function literal."""
    arg = c.values[i]
    if isinstance(arg.value, FunctionValue):
        return arg.value
    if arg.is_literal and arg.value is None:
        return None
    raise PlanInvalidError(f"{c.ref.name}: argument {i} must be a lambda", c.path)


def _null_result(c: Call, fallback: T.DataType) -> Column:
    return cast(F.lit(None), c.output_type or fallback)


def _higher_order(spark_fn: Callable[[Column, Callable[..., Column]], Column], result: str) -> Handler:
    """`fn(list, lambda)` as Spark's `spark_fn`; a NULL function yields NULL (`result`: list or bool)."""

    def build(c: Call) -> Column:
        xs = c.arity(2).values[0]
        fn = _function_argument(c, 1)
        if fn is None:
            return _null_result(c, xs.type if result == "list" else T.BooleanType())
        return spark_fn(xs.col, fn.spark(1))

    return build


def _cardinality(c: Call) -> Column:
    """Number of elements, nulls counted; NULL for a NULL list (Spark's `size` would say -1)."""
    (xs,) = c.arity(1).cols
    return F.call_function("array_size", xs).cast(T.LongType())


def _desc_nulls_first(left: Column, right: Column) -> Column:
    """Comparator for `array_sort`: nulls first, then descending."""
    return (
        F.when(left.isNull() & right.isNull(), F.lit(0))
        .when(left.isNull(), F.lit(-1))
        .when(right.isNull(), F.lit(1))
        .when(left > right, F.lit(-1))
        .when(left < right, F.lit(1))
        .otherwise(F.lit(0))
    )


_SORTS: dict[str, Callable[[Column], Column]] = {
    "ASC_NULLS_FIRST": lambda xs: F.sort_array(xs, asc=True),
    "ASC_NULLS_LAST": F.array_sort,
    "DESC_NULLS_LAST": lambda xs: F.sort_array(xs, asc=False),
    "DESC_NULLS_FIRST": lambda xs: F.array_sort(xs, _desc_nulls_first),
}


SORT_DIRECTION = Option("direction", tuple(_SORTS), "ASC_NULLS_LAST")


def _sort(c: Call) -> Column:
    (xs,) = c.arity(1).cols
    direction = c.read(SORT_DIRECTION)
    return _SORTS[direction](xs)


LIST: dict[str, Handler] = {
    "index_in": _index_in,
    "transform": _higher_order(F.transform, "list"),
    "filter": _higher_order(F.filter, "list"),
    "any_match": _higher_order(F.exists, "bool"),  # three-valued (Spark's default for exists)
    "all_match": _higher_order(F.forall, "bool"),
    "cardinality": _cardinality,
    "sort": _sort,
}

# The options each handler above reads (what `validate` checks; keys as LIST's).
LIST_OPTIONS: dict[str, OptionRule] = {"index_in": always(NAN_EQUALITY), "sort": always(SORT_DIRECTION)}
