"""TopNRel: a sort and a fetch in one relation.

ROWS_ONLY becomes `orderBy(...).limit(offset + count).offset(offset)`, which Catalyst plans as one
TakeOrderedAndProject (a per-partition top-k, no global sort). WITH_TIES also keeps the rows that tie with the
last row kept: `rank() <= offset + count` over the sort keys, with `row_number() > offset` for the skipped
rows (Spark has no FETCH ... WITH TIES).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from pyspark.sql import Window
from pyspark.sql import functions as F
from substrait import algebra_pb2 as alg

from ...errors import PlanInvalidError, UnsupportedFeatureError
from ..relation import Relation, column
from ..scope import Scope
from .sort import _constant_int, sort_columns, sort_refusals

if TYPE_CHECKING:
    from ..consumer import SubstraitConsumer

FetchMode = alg.FetchMode


def _bounds(cx: SubstraitConsumer, rel: alg.TopNRel, path: str) -> tuple[int, int | None]:
    """(offset, count); count None means all rows (a NULL count)."""
    offset = (_constant_int(cx, rel.offset, f"{path}.offset") or 0) if rel.HasField("offset") else 0
    if not rel.HasField("count"):
        raise PlanInvalidError("top-N without a count", f"{path}.count")
    count = _constant_int(cx, rel.count, f"{path}.count")
    if offset < 0:
        raise PlanInvalidError(f"negative top-N offset {offset}", f"{path}.offset")
    if count is not None and count < 0:
        raise PlanInvalidError(f"negative top-N count {count}", f"{path}.count")
    return offset, count


def translate_top_n(cx: SubstraitConsumer, rel: alg.TopNRel, path: str, outer: Scope | None) -> Relation:
    source = cx.rel(rel.input, f"{path}.input", outer)
    if source.correlated():
        raise UnsupportedFeatureError("top-N inside a correlated subquery", path)
    if not len(rel.sorts):
        raise PlanInvalidError("top-N needs at least one sort field", f"{path}.sorts")
    if rel.mode not in (FetchMode.FETCH_MODE_ROWS_ONLY, FetchMode.FETCH_MODE_WITH_TIES):
        raise PlanInvalidError("top-N fetch mode unspecified (ROWS_ONLY or WITH_TIES)", f"{path}.mode")
    offset, count = _bounds(cx, rel, path)
    if rel.mode == FetchMode.FETCH_MODE_WITH_TIES and count is not None:
        source = source.materialized()  # the window needs the columns by name
        orders = sort_columns(cx, rel.sorts, Scope(source, outer), f"{path}.sorts")
        return _with_ties(cx, source, orders, offset, count)
    orders = sort_columns(cx, rel.sorts, Scope(source, outer), f"{path}.sorts")
    df = source.frame.orderBy(*orders)  # a pending projection commutes with ORDER BY ... LIMIT
    if count is not None:
        df = df.limit(offset + count)
    if offset:
        df = df.offset(offset)
    return source.over(df)


def _with_ties(cx: SubstraitConsumer, source: Relation, orders, offset: int, count: int) -> Relation:
    window = Window.orderBy(*orders)
    rank, row = cx.names.fresh(), cx.names.fresh()
    df = source.df.withColumn(rank, F.rank().over(window)).withColumn(row, F.row_number().over(window))
    kept = df.filter((column(rank) <= offset + count) & (column(row) > offset))
    ordered = kept.orderBy(column(row)).drop(rank, row)
    return source.with_df(ordered)


def refusals(rel: alg.TopNRel, path: str) -> Iterator[tuple[str, str]]:
    """What the translation refuses in a top-N, as (feature, path), without translating (`analyze`)."""
    for name in ("offset", "count"):
        if rel.HasField(name) and getattr(rel, name).WhichOneof("rex_type") != "literal":
            yield "top-N offset/count computed by an expression (only literals)", f"{path}.{name}"
    yield from sort_refusals(rel.sorts, f"{path}.sorts")
