"""Predicate subqueries, and MARK joins, as boolean columns of their host relation — never with row ids.

Spark SQL turns a predicate subquery that stands inside an expression (under an OR, a NOT, a CASE, in a
projection) into an ExistenceJoin, which the DataFrame API lacks. Here the host keeps its rows and gains columns
from joins Spark optimizes like its own. A row id (`monotonically_increasing_id()`) is non-deterministic: Spark
pushes no condition through it, so the host's own join conditions stayed above a cartesian product (TPC-H q18 as
Isthmus writes it, `filter(and(cast(<IN> as bool), c_custkey = o_custkey, …), cross(cross(…)))`, never ended).

- Whether some row matches, when equalities alone decide it (IN; EXISTS correlated by equalities): a left join
  with the subquery's distinct keys — a hash join on the keys Spark's ExistenceJoin uses.
- NULLs, and ANY / ALL with an order comparison: a left join with the subquery's row count, NULL count, minimum
  and maximum per correlation key; uncorrelated, one scalar subquery over a per-run temp view (no join at all).
- Anything else (a correlated predicate that is not an equality, several needles whose NULLs count, a MARK join
  on an arbitrary condition): the host split by semi and anti joins on the condition, each part marked with its
  constant, and put together again.

The subquery's rows are those its correlated predicates (`Relation.pending`) hold TRUE for, as in SQL's WHERE;
the predicate compares needles with those rows in three-valued logic. `Truth` says how much of the answer the
place the predicate stands in reads: TRUE needs one join, VALUE the exact TRUE / NULL / FALSE.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from . import spark_subqueries
from .relation import Pending, Relation, all_of, cached, column, conjunction, union_all
from .scope import Hosted, Truth

if TYPE_CHECKING:
    from .consumer import SubstraitConsumer

Comparison = Callable[[Column, Column], Column]

# What `_stats` can compute over the subquery's one column, by name.
_STATS: dict[str, Callable[[Column], Column]] = {
    "rows": lambda v: F.count(F.lit(1)),
    "nulls": lambda v: F.count(F.lit(1)) - F.count(v),
    "lo": F.min,
    "hi": F.max,
}
_COUNTS = ("rows", "nulls")
# x op ANY (values) is decided by the smallest value for > and >=, by the largest for < and <=.
_BOUND: dict[Comparison, str] = {operator.gt: "lo", operator.ge: "lo", operator.lt: "hi", operator.le: "hi"}


def _null() -> Column:
    return cached(("marks", "null-boolean"), lambda: F.lit(None).cast(T.BooleanType()))


def three_valued(true: Column, unknown: Column) -> Column:
    """TRUE where `true`, else NULL where `unknown`, else FALSE."""
    return F.when(true, F.lit(True)).when(unknown, _null()).otherwise(F.lit(False))


def mark(
    cx: SubstraitConsumer,
    host: Relation,
    body: Relation,
    needles: Sequence[Column],
    op: Comparison,
    truth: Truth,
) -> Hosted:
    """`needles op ANY (body)` — IN with `operator.eq`; EXISTS without needles — as a boolean column over
    `host`, widened by the columns the answer reads (hidden ones; its pending projection applied first when a join
    extends it).

    `body` is materialized: its columns are the values compared, its pending predicates the correlation.
    """
    values = [body.col(i) for i in range(len(body.names))] if needles else []
    keys = [p for p in body.pending if p.equality is not None]
    if len(keys) < len(body.pending) or (len(needles) > 1 and truth is not Truth.TRUE):
        tests = [op(n, v) for n, v in zip(needles, values, strict=True)]
        return split_mark(cx, host, body.df, [p.cond for p in body.pending], tests, truth)
    if not needles:
        return _matched(cx, host, body.df, keys, [])
    if op is operator.eq:
        hit = _matched(cx, host, body.df, keys, list(zip(needles, values, strict=True)))
        if truth is Truth.TRUE:
            return hit
        widened, s = _stats(cx, hit.rel, body.df, keys, values[0], _COUNTS)
        # No row equal, but one compares as NULL: the needle is NULL (and there are rows), or a value is.
        unknown = (s["rows"] > 0) & (needles[0].isNull() | (s["nulls"] > 0))
        answer = hit.col | unknown if truth is Truth.NOT_FALSE else three_valued(hit.col, unknown)
        return Hosted(widened, answer)
    widened, s = _stats(cx, host, body.df, keys, values[0], (*_COUNTS, "lo", "hi"))
    return Hosted(widened, _any(needles[0], op, s))


def _any(x: Column, op: Comparison, s: dict[str, Column]) -> Column:
    """x op ANY (values), exactly in three-valued logic, from the values' count, NULL count, minimum and maximum:
    some value compares TRUE iff the extreme one does (for <>: iff the minimum or the maximum differs from x);
    otherwise a NULL value, or a NULL x, makes it NULL; no values at all make it FALSE."""
    some = (x != s["lo"]) | (x != s["hi"]) if op is operator.ne else op(x, s[_BOUND[op]])
    unknown = F.when(s["nulls"] > 0, _null()).otherwise(F.lit(False))
    return F.when(s["rows"] == 0, F.lit(False)).otherwise(some | unknown)


def key_names(keys: Sequence[Pending]) -> list[str]:
    """The body's columns that correlation equalities compare (`Pending.equality`), once each."""
    return list(dict.fromkeys(p.equality for p in keys if p.equality is not None))


def join_left(host: Relation, right: DataFrame, on: Column, added: list[str], dropped: list[str]) -> Relation:
    """`host` (its pending projection applied) left-joined with `right` (at most one row per host row): its
    `added` columns kept, its `dropped` ones not (the body's key columns, which a second join with the same body
    brings again)."""
    host = host.materialized()
    df = host.df.join(right, on=on, how="left")
    if dropped:
        df = df.drop(*dropped)
    return host.widened(df, added)


def _matched(
    cx: SubstraitConsumer,
    host: Relation,
    body: DataFrame,
    keys: Sequence[Pending],
    pairs: Sequence[tuple[Column, Column]],
) -> Hosted:
    """Whether some body row meets the correlation equalities `keys` and `needle = value` for each pair
    (TRUE or FALSE, never NULL): a left join with the body's distinct keys."""
    if not keys and not pairs:  # uncorrelated EXISTS: Spark makes it a scalar subquery with LIMIT 1
        return Hosted(host, spark_subqueries.exists(cx, body))
    inner = key_names(keys)
    value_names = [cx.names.fresh() for _ in pairs]
    found = cx.names.fresh()
    right = body.select(
        *[column(n) for n in inner], *[value.alias(n) for (_, value), n in zip(pairs, value_names, strict=True)]
    ).distinct()
    on = [p.cond for p in keys] + [n == column(v) for (n, _), v in zip(pairs, value_names, strict=True)]
    widened = join_left(host, right.withColumn(found, F.lit(True)), all_of(on), [found], [*inner, *value_names])
    return Hosted(widened, column(found).isNotNull())


def _stats(
    cx: SubstraitConsumer,
    host: Relation,
    body: DataFrame,
    keys: Sequence[Pending],
    value: Column,
    wanted: Sequence[str],
) -> tuple[Relation, dict[str, Column]]:
    """The `wanted` figures of `_STATS` over the body's rows for each host row (per correlation key), and the
    host they are columns of."""
    if not keys:
        name = cx.names.fresh()
        one_row = body.agg(F.struct(*[_STATS[w](value).alias(w) for w in wanted]).alias(name))
        row = spark_subqueries.scalar(cx, one_row, name)
        return host, {w: row.getField(w) for w in wanted}
    inner = key_names(keys)
    names = {w: cx.names.fresh() for w in wanted}
    right = body.groupBy(*[column(n) for n in inner]).agg(*[_STATS[w](value).alias(names[w]) for w in wanted])
    widened = join_left(host, right, all_of([p.cond for p in keys]), list(names.values()), inner)
    # A host row whose key no body row has: no rows, no NULLs.
    return widened, {w: F.coalesce(column(n), F.lit(0)) if w in _COUNTS else column(n) for w, n in names.items()}


def split_mark(
    cx: SubstraitConsumer,
    host_rel: Relation,
    right: DataFrame,
    where: Sequence[Column],
    tests: Sequence[Column],
    truth: Truth,
) -> Hosted:
    """Whether some `right` row meets every `where` condition (TRUE only) and the conjunction of `tests`
    (three-valued), for any conditions: `host_rel` (its pending projection applied) split by semi and anti joins,
    each part with its mark."""
    host_rel = host_rel.materialized()
    host = host_rel.df
    hit = all_of([*where, *tests])
    unknown = conjunction([*where, all_of(tests).isNull()]) if tests else None  # rows whose tests are NULL
    if unknown is not None and truth is Truth.NOT_FALSE:
        hit, unknown = hit | unknown, None
    parts: list[tuple[DataFrame, bool | None]]  # a part of the host and its mark
    if unknown is None or truth is Truth.TRUE:
        parts = [(host.join(right, hit, "left_semi"), True), (host.join(right, hit, "left_anti"), False)]
    else:
        rest = host.join(right, hit, "left_anti")
        parts = [
            (host.join(right, hit, "left_semi"), True),
            (rest.join(right, unknown, "left_semi"), None),
            (rest.join(right, unknown, "left_anti"), False),
        ]
    flag = cx.names.fresh()
    df = functools.reduce(union_all, [p.withColumn(flag, F.lit(v).cast(T.BooleanType())) for p, v in parts])
    return Hosted(host_rel.widened(df, [flag]), column(flag))
