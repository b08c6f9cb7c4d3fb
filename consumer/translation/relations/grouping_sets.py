"""Several grouping sets as one Spark aggregate: ROLLUP, CUBE or GROUPING SETS over an Expand, as Spark SQL plans
`GROUP BY ROLLUP(...)`, instead of one aggregate per set joined by UNION ALL (each re-reading its input).

A set is given as the indexes of the aggregate's distinct key expressions it groups by. Which Spark form fits is
read from the sets alone; the grouping-set column's value per set comes from Spark's `grouping_id()` (a bit per
key the set leaves out, the first key highest), mapped to the producer's value where they differ.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from itertools import combinations, pairwise
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..relation import column


class GroupingForm(Enum):
    ROLLUP = "rollup"
    CUBE = "cube"
    SETS = "grouping sets"  # DataFrame.groupingSets: Spark 4 clients only


@dataclass(frozen=True)
class Key:
    """A grouping key: its expression over the input, type and output name; `input_column` when it is one of the
    input's columns as it is (Spark's Expand then reads it without a Project below, as in Spark SQL's plan)."""

    col: Column
    type: T.DataType
    name: str
    input_column: str | None = None

    def grouped(self) -> Column:
        return self.col if self.input_column else self.col.alias(self.name)

    def output(self) -> Column:
        return column(self.input_column).alias(self.name) if self.input_column else column(self.name)


@dataclass(frozen=True)
class GroupingShape:
    form: GroupingForm
    order: tuple[int, ...]  # the keys in the order Spark is given them

    def spark_id(self, grouping_set: Sequence[int]) -> int:
        """Spark's grouping_id() of the rows this set groups."""
        n = len(self.order)
        return sum(1 << (n - 1 - j) for j, k in enumerate(self.order) if k not in grouping_set)


def _rollup_order(sets: list[frozenset[int]], keys: int) -> tuple[int, ...] | None:
    """The key order whose ROLLUP gives exactly these sets: one set of each size from all keys down to none, each
    the previous one less one key (the last of the order)."""
    by_size = sorted(sets, key=len, reverse=True)
    if [len(s) for s in by_size] != list(range(keys, -1, -1)):
        return None
    removed: list[int] = []
    for bigger, smaller in pairwise(by_size):
        if not smaller < bigger:
            return None
        removed.extend(bigger - smaller)
    return tuple(reversed(removed))


def _is_cube(sets: list[frozenset[int]], keys: int) -> bool:
    every = {frozenset(c) for r in range(keys + 1) for c in combinations(range(keys), r)}
    return len(sets) == len(every) and set(sets) == every


def shape_of(sets: list[list[int]], keys: int, sets_available: bool) -> GroupingShape | None:
    """The one-aggregate form of these grouping sets over `keys` distinct keys, or None (they stay a union of
    aggregates): a repeated set (its rows counted twice) has no Spark form, and neither has a key no set groups by."""
    frozen = [frozenset(s) for s in sets]
    if len(set(frozen)) < len(frozen) or frozenset().union(*frozen) != frozenset(range(keys)) or keys > 30:
        return None
    order = _rollup_order(frozen, keys)
    if order is not None:
        return GroupingShape(GroupingForm.ROLLUP, order)
    if _is_cube(frozen, keys):
        return GroupingShape(GroupingForm.CUBE, tuple(range(keys)))
    if sets_available:
        return GroupingShape(GroupingForm.SETS, tuple(range(keys)))
    return None


def grouped_frame(
    frame: DataFrame,
    shape: GroupingShape,
    sets: list[list[int]],
    keys: Sequence[Key],
    measures: Sequence[tuple[Column, str]],
    id_name: str,
    no_rows_in: Callable[[DataFrame], Column],
) -> DataFrame:
    """The aggregate over `frame` grouped by `shape`: the keys (by key index), the measures (expression, name),
    then Spark's grouping id named `id_name`.

    Over no rows Spark's Expand leaves no row for the empty set, where SQL and Substrait keep one (the measures
    over no rows: count 0, the others NULL). That row is added where the input has none: NOT EXISTS over the
    input (`no_rows_in`, `spark_subqueries.exists`), which Spark runs as a scalar subquery of the input's first
    row — it runs the input's pipeline again until a row comes (TPC-DS q05 at sf 1: 1.4 s of its 3 s;
    bench/RESULTS.md).
    Written as a subquery, not a DataFrame join: a join of two frames holding the same input is ambiguous to
    Spark's analyzer where the input's columns are bound to their frames."""
    cols = [keys[k].grouped() for k in shape.order]
    if shape.form is GroupingForm.ROLLUP:
        grouped = frame.rollup(*cols)
    elif shape.form is GroupingForm.CUBE:
        grouped = frame.cube(*cols)
    else:
        spark4: Any = frame  # DataFrame.groupingSets: Spark 4 clients
        grouped = spark4.groupingSets([[keys[k].col for k in s] for s in sets], *cols)
    aggs = [m.alias(name) for m, name in measures]
    outputs = [*[k.output() for k in keys], *[column(name) for _, name in measures], column(id_name)]
    df = grouped.agg(*aggs, F.grouping_id().alias(id_name)).select(*outputs)
    if all(sets):
        return df
    counted = f"{id_name}_rows"  # agg needs at least one column
    none = frame.limit(0).agg(*aggs, F.count(F.lit(1)).alias(counted))  # the measures over no rows
    total = none.select(
        *[F.lit(None).cast(k.type).alias(k.name) for k in keys],
        *[column(name) for _, name in measures],
        F.lit(shape.spark_id([])).cast("long").alias(id_name),
    )
    return df.unionAll(total.where(no_rows_in(frame)))


def set_column(shape: GroupingShape, sets: list[list[int]], ids: list[int], spark_id: Column) -> Column:
    """The grouping-set column: the producer's value `ids[i]` for the rows of `sets[i]`, from Spark's id."""
    pairs = [(shape.spark_id(s), i) for s, i in zip(sets, ids, strict=True)]
    if all(a == b for a, b in pairs):
        return spark_id.cast("int")
    case = F.when(spark_id == F.lit(pairs[0][0]), F.lit(pairs[0][1]))
    for spark, given in pairs[1:]:
        case = case.when(spark_id == F.lit(spark), F.lit(given))
    return case
