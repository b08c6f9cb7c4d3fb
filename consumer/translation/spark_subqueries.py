"""Spark's own subquery expressions (scalar, EXISTS, IN) over DataFrames the translation built.

Spark 4's DataFrame API states them directly (`DataFrame.scalar()`, `DataFrame.exists()`,
`Column.isin(DataFrame)`, `Column.outer()` for the enclosing query's columns): nothing reaches the server before
the plan runs. A client without it (pyspark 3.5) gets Spark SQL text over a per-run temp view of the DataFrame
(`SubstraitConsumer.register_view`: on Spark Connect a command round trip each, dropped by `close()`). Both are the
same logical plan but for the view's alias, which the optimizer removes: the physical plan is the same.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from .relation import ColumnComparison, all_of, column, quote

if TYPE_CHECKING:
    from .consumer import SubstraitConsumer

# `ColumnComparison.op` (Spark SQL's operator) as the Column operation.
_OPERATIONS: dict[str, Callable[[Column, Column], Column]] = {
    "=": operator.eq,
    "<>": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def has_api(df: DataFrame) -> bool:
    """Whether `df`'s client states subqueries as DataFrames (pyspark 4.x, classic or Connect). Asked of the
    class: a pyspark 3.5 Connect DataFrame looks a missing attribute up as a column, an AnalyzePlan round trip."""
    return hasattr(type(df), "scalar") and hasattr(type(df), "exists")


def _api(df: DataFrame) -> Any:
    """`df` as a pyspark 4.x DataFrame (`scalar`, `exists`: the type checker reads pyspark 3.5's stubs)."""
    return df


def scalar(cx: SubstraitConsumer, df: DataFrame, name: str) -> Column:
    """`(SELECT name FROM df)`: `df` has at most one row."""
    if has_api(df):
        return _api(df.select(column(name))).scalar()
    return F.expr(f"(SELECT {quote(name)} FROM {quote(cx.register_view(df))})")


def exists(cx: SubstraitConsumer, df: DataFrame, negated: bool = False) -> Column:
    """`(NOT) EXISTS (SELECT 1 FROM df)`, uncorrelated."""
    if has_api(df):
        found = _api(df.select(F.lit(1))).exists()
        return ~found if negated else found
    return F.expr(f"{'NOT ' if negated else ''}EXISTS (SELECT 1 FROM {quote(cx.register_view(df))})")


def correlated_exists(
    df: DataFrame,
    comparisons: Sequence[ColumnComparison],
    negated: bool,
    outer: str,
    read: Mapping[str, str] | None = None,
) -> Column:
    """`(NOT) EXISTS (SELECT 1 FROM df WHERE comparisons)` with the API (`has_api`): each comparison's `outer`
    column is the enclosing query's, qualified by its alias `outer` — by name alone the analyzer binds it to a
    column of that name anywhere under `df` (a table read again), as it adds missing columns to a Project —, the
    other `df`'s (by its name in `read` when given)."""
    inner = read or {}

    def side(c: ColumnComparison, name: str) -> Column:
        if name == c.outer:
            outer_column: Any = F.col(f"{quote(outer)}.{quote(name)}")  # Column.outer: pyspark 4.x
            return outer_column.outer()
        return column(inner.get(name, name))

    where = all_of([_OPERATIONS[c.op](side(c, c.left), side(c, c.right)) for c in comparisons])
    found = _api(df.where(where).select(F.lit(1))).exists()
    return ~found if negated else found


def within(cx: SubstraitConsumer, needles: Sequence[str], df: DataFrame, columns: Sequence[str]) -> Column:
    """`needles IN (SELECT columns FROM df)`: the enclosing query's columns against `df`'s, pairwise."""
    if has_api(df):
        values = df.select(*[column(n) for n in columns])
        needle = column(needles[0]) if len(needles) == 1 else F.struct(*[column(n) for n in needles])
        return needle.isin(values)
    view = cx.register_view(df.select(*[column(n) for n in columns]))
    left = ", ".join(quote(n) for n in needles)
    right = ", ".join(quote(n) for n in columns)
    needle_sql = left if len(needles) == 1 else f"({left})"
    return F.expr(f"{needle_sql} IN (SELECT {right} FROM {quote(view)})")
