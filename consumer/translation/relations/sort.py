"""SortRel and FetchRel."""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column
from substrait import algebra_pb2 as alg

from ...errors import PlanInvalidError, UnsupportedFeatureError
from ..relation import Relation
from ..scope import Scope

if TYPE_CHECKING:
    from ..consumer import SubstraitConsumer

SortField = alg.SortField
# Bound methods by name, never `Column.asc_nulls_first`: `pyspark.sql.Column` is the classic class on 3.5 (its
# methods call the JVM through `_jc`), which a Spark Connect column is not.
_DIRECTIONS = {
    SortField.SORT_DIRECTION_ASC_NULLS_FIRST: operator.methodcaller("asc_nulls_first"),
    SortField.SORT_DIRECTION_ASC_NULLS_LAST: operator.methodcaller("asc_nulls_last"),
    SortField.SORT_DIRECTION_DESC_NULLS_FIRST: operator.methodcaller("desc_nulls_first"),
    SortField.SORT_DIRECTION_DESC_NULLS_LAST: operator.methodcaller("desc_nulls_last"),
    # CLUSTERED only asks equal values to be adjacent; ascending order gives that.
    SortField.SORT_DIRECTION_CLUSTERED: operator.methodcaller("asc_nulls_first"),
}


CUSTOM_COMPARISON = "sort by a custom comparison function"
COMPUTED_FETCH = "fetch offset/count computed by an expression (only literals)"


def sort_refusals(sorts: Any, path: str) -> Iterator[tuple[str, str]]:
    """What `sort_columns` refuses in sort fields (of a sort, a top-N or a window), as (feature, path)."""
    for i, s in enumerate(sorts):
        if s.WhichOneof("sort_kind") == "comparison_function_reference":
            yield CUSTOM_COMPARISON, f"{path}[{i}]"


def refusals(rel: alg.SortRel, path: str) -> Iterator[tuple[str, str]]:
    """What the sort translator refuses, as (feature, path), from the plan alone (`analyze` reads it too)."""
    yield from sort_refusals(rel.sorts, f"{path}.sorts")


def fetch_refusals(rel: alg.FetchRel, path: str) -> Iterator[tuple[str, str]]:
    """What the fetch translator refuses from the plan alone: an offset or count that is not a literal."""
    for name in ("offset_expr", "count_expr"):
        if rel.HasField(name) and getattr(rel, name).WhichOneof("rex_type") != "literal":
            yield COMPUTED_FETCH, f"{path}.{name}"


def sort_columns(cx: SubstraitConsumer, sorts, scope: Scope, path: str) -> list[Column]:
    out = []
    for i, s in enumerate(sorts):
        p = f"{path}[{i}]"
        col = cx.expression(s.expr, scope, f"{p}.expr").col
        kind = s.WhichOneof("sort_kind")
        if kind == "comparison_function_reference":
            raise UnsupportedFeatureError(CUSTOM_COMPARISON, p)
        order = _DIRECTIONS.get(s.direction)
        if order is None:
            raise PlanInvalidError("sort field without a direction", p)
        out.append(order(col))
    return out


def translate_sort(cx: SubstraitConsumer, rel: alg.SortRel, path: str, outer: Scope | None) -> Relation:
    source = cx.rel(rel.input, f"{path}.input", outer)
    orders = sort_columns(cx, rel.sorts, Scope(source, outer), f"{path}.sorts")
    if not orders:
        return source
    return source.over(source.frame.orderBy(*orders))


def _constant_int(cx: SubstraitConsumer, e: alg.Expression, path: str) -> int | None:
    """The value of a literal offset/count expression; None for a NULL literal."""
    from ..literals import python_value

    if e.WhichOneof("rex_type") != "literal":
        raise UnsupportedFeatureError(COMPUTED_FETCH, path)
    value, _ = python_value(e.literal, path)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise PlanInvalidError("fetch offset/count must be an integer", path)
    return value


def translate_fetch(cx: SubstraitConsumer, rel: alg.FetchRel, path: str, outer: Scope | None) -> Relation:
    source = cx.rel(rel.input, f"{path}.input", outer)
    if source.correlated():
        raise UnsupportedFeatureError("LIMIT/OFFSET inside a correlated subquery", path)
    offset = 0
    if rel.HasField("offset_expr"):
        # Spec: an offset expression evaluating to NULL is treated as 0.
        offset = _constant_int(cx, rel.offset_expr, f"{path}.offset_expr") or 0
    count = -1
    if rel.HasField("count_expr"):
        # Spec: a count expression evaluating to NULL (or no count) means all records.
        value = _constant_int(cx, rel.count_expr, f"{path}.count_expr")
        count = -1 if value is None else value
    if offset < 0:
        raise PlanInvalidError(f"negative fetch offset {offset}", path)
    if count < -1:
        raise PlanInvalidError(f"negative fetch count {count}", path)
    df = source.frame  # a pending projection commutes with LIMIT/OFFSET
    if count >= 0:
        df = df.limit(offset + count)
    if offset:
        df = df.offset(offset)
    return source.over(df)
