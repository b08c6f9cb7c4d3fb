"""Window functions: Substrait base name -> Spark window column builder.

A builder gets a `WindowCall` (the call, whether it is DISTINCT, and its window `Over`) and returns the
windowed Spark column (`F.rank().over(...)`): some functions take the frame (aggregates, first/last/nth_value),
the others (ranking, lag/lead) only the partition and order — Spark refuses a frame on those, and the spec's
PARTITION window type means they see the whole partition anyway.

The aggregates of `aggregate.py` are here too, each applied over its frame; the consumer falls back to an
aggregate table entry it does not find here (a user-added aggregate) by applying that one over the frame.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pyspark.sql import Column, Window, WindowSpec
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ...loading.extensions import FunctionRef
from ...types import cast, family
from .aggregate import AGGREGATE
from .call import Call


@dataclass(frozen=True)
class Over:
    """A window: partition keys, ordering (directions applied) and frame.

    `rows` picks ROWS (positions) or RANGE (values of the one ordering key). `lower`/`upper` are offsets
    from the current row (negative: preceding) or None for the partition's start/end.
    """

    partitions: list[Column] = field(default_factory=list)
    orders: list[Column] = field(default_factory=list)
    rows: bool = True
    lower: int | None = None
    upper: int | None = None

    def ordered(self) -> WindowSpec:
        """Partition and order, no frame (ranking, lag/lead). Without sort fields every row is a peer of every
        other and their order is undefined: a constant key gives exactly that, which Spark accepts."""
        return Window.partitionBy(*self.partitions).orderBy(*(self.orders or [F.lit(0)]))

    def framed(self) -> WindowSpec:
        """Partition, order and frame (aggregates and value functions)."""
        lo = Window.unboundedPreceding if self.lower is None else self.lower
        hi = Window.unboundedFollowing if self.upper is None else self.upper
        spec = Window.partitionBy(*self.partitions)
        if self.orders:
            spec = spec.orderBy(*self.orders)
        elif (self.lower, self.upper) != (None, None):
            spec = spec.orderBy(F.lit(0))  # a row frame over an undefined order
        return spec.rowsBetween(lo, hi) if self.rows or not self.orders else spec.rangeBetween(lo, hi)


@dataclass
class WindowCall(Call):
    """A window function invocation: the call, its DISTINCT invocation and its window."""

    distinct: bool = False
    over: Over = field(default_factory=Over)


WindowHandler = Callable[[WindowCall], Column]


def _typed(col: Column, c: WindowCall, default: T.DataType) -> Column:
    """Spark's ranking functions return int; Substrait declares i64 (or the plan's output type)."""
    return cast(col, c.output_type or default)


# A handler's refusals that `validate` can tell from the plan alone: fn(distinct, value arguments) -> the words
# `c.unsupported` raises with, or None. Attached to the handler as `static_refusal` (`windows.static_findings`).
StaticRefusal = Callable[[bool, int], "str | None"]


def _refusing(handler: WindowHandler, refusal: StaticRefusal) -> WindowHandler:
    handler.static_refusal = refusal  # type: ignore[attr-defined]
    return handler


def _ranking(fn: Callable[[], Column], default: T.DataType) -> WindowHandler:
    def build(c: WindowCall) -> Column:
        c.arity(0)
        if c.distinct:
            raise c.unsupported("DISTINCT invocation")
        return _typed(fn().over(c.over.ordered()), c, default)

    return _refusing(build, lambda distinct, values: "DISTINCT invocation" if distinct else None)


def _constant_int(c: WindowCall, i: int, what: str) -> int | None:
    """A literal integer argument (Spark takes these offsets only as constants); None for NULL."""
    arg = c.values[i]
    if not arg.is_literal:
        raise c.unsupported(f"{what} computed by an expression (Spark takes only a constant)")
    if arg.value is not None and (not isinstance(arg.value, int) or isinstance(arg.value, bool)):
        raise c.unsupported(f"{what} {arg.value!r} is not an integer")
    return arg.value


def _ntile(c: WindowCall) -> Column:
    c.arity(1)
    n = _constant_int(c, 0, "ntile bucket count")
    if n is None:
        return F.lit(None).cast(c.output_type or c.values[0].type)
    if n <= 0:
        raise c.unsupported(f"ntile bucket count {n} (must be positive)")
    return _typed(F.ntile(n).over(c.over.ordered()), c, c.values[0].type)


def _shift(direction: int) -> WindowHandler:
    """lag (direction -1) / lead (+1): a constant row offset, default value NULL or an expression; a negative
    offset looks the other way (spec), a NULL offset gives NULL."""

    def build(c: WindowCall) -> Column:
        c.arity(1, 2, 3)
        x = c.values[0]
        offset = _constant_int(c, 1, "row_offset") if len(c.values) > 1 else 1
        if offset is None:
            return F.lit(None).cast(c.output_type or x.type)
        default = c.values[2].col if len(c.values) > 2 else F.lit(None)
        name = "lag" if offset * direction <= 0 else "lead"
        return F.call_function(name, x.col, F.lit(abs(offset)), default).over(c.over.ordered())

    return build


def _nth_value(c: WindowCall) -> Column:
    c.arity(2)
    n = _constant_int(c, 1, "window_offset")
    if n is None:
        return F.lit(None).cast(c.output_type or c.values[0].type)
    if n <= 0:
        if c.option("on_domain_error", ("NAN", "ERROR"), "ERROR") == "NAN":
            return F.lit(None).cast(c.output_type or c.values[0].type)
        return F.raise_error(F.lit(f"nth_value: window_offset {n} is not a positive integer"))
    return F.nth_value(c.values[0].col, n).over(c.over.framed())


def _value(fn: Callable[[Column], Column]) -> WindowHandler:
    """first_value / last_value over the frame (NULLs count)."""
    return lambda c: fn(c.arity(1).values[0].col).over(c.over.framed())


# --- aggregates over a frame ---------------------------------------------------------------------------------

# DISTINCT does not change these aggregates' results; Spark refuses DISTINCT in windows, so it is dropped.
_DISTINCT_IRRELEVANT = {"min", "max", "any_value", "first", "bool_and", "bool_or", "approx_count_distinct",
                        "approx_distinct"}  # fmt: skip


def _distinct_set(c: WindowCall) -> Column:
    """The frame's distinct non-NULL values: Spark has no DISTINCT window aggregate, but collect_set over it."""
    return F.collect_set(c.arity(1).values[0].col).over(c.over.framed())


_COUNT_DISTINCT = "count(DISTINCT ...) over a window needs exactly one argument"


def _count(c: WindowCall) -> Column:
    if c.distinct:
        if len(c.values) != 1:
            raise c.unsupported(_COUNT_DISTINCT)
        return F.size(_distinct_set(c)).cast("bigint")
    return AGGREGATE["count"](c, False).over(c.over.framed())


_refusing(_count, lambda distinct, values: _COUNT_DISTINCT if distinct and values != 1 else None)


def _sum_of(items: Column, zero_type: T.DataType) -> Column:
    """The sum of an array's elements, accumulated in `zero_type` (Spark's aggregate keeps one type)."""
    return F.aggregate(items, cast(F.lit(0), zero_type), lambda acc, x: cast(acc + x, zero_type))


def _sum(c: WindowCall) -> Column:
    """sum; DISTINCT as the sum of the frame's distinct values (NULL for none, as sum)."""
    if not c.distinct:
        return F.sum(c.arity(1).values[0].col).over(c.over.framed())
    items = _distinct_set(c)
    x = c.values[0].type
    total_type = c.output_type or (x if family(x) in ("float", "decimal") else T.LongType())
    return F.when(F.size(items) > 0, _sum_of(items, total_type))


def _avg(c: WindowCall) -> Column:
    if not c.distinct:
        return F.avg(c.arity(1).values[0].col).over(c.over.framed())
    items = _distinct_set(c)
    total = _sum_of(items, c.output_type or T.DoubleType())
    return F.when(F.size(items) > 0, total / F.size(items))


def _sum0(c: WindowCall) -> Column:
    total = _sum(c)
    return F.coalesce(total, F.lit(0).cast(c.output_type)) if c.output_type else F.coalesce(total, F.lit(0))


def _string_agg(c: WindowCall) -> Column:
    x, sep = (*c.arity(1, 2).cols, F.lit(","))[:2]
    items = (F.collect_set(x) if c.distinct else F.collect_list(x)).over(c.over.framed())
    return F.when(F.size(items) > 0, F.call_function("array_join", items, sep))


def over_frame(name: str, handler: Callable[[Call, bool], Column] | None = None) -> WindowHandler:
    """An aggregate applied over the frame. `handler` (default: the `AGGREGATE` entry) must return one Spark
    aggregate call: `.over` applies to it."""

    def build(c: WindowCall) -> Column:
        if c.distinct and name not in _DISTINCT_IRRELEVANT:
            raise c.unsupported(_OVER_FRAME_DISTINCT)
        agg = handler or AGGREGATE[name]
        return agg(c, False).over(c.over.framed())

    refuses = name not in _DISTINCT_IRRELEVANT
    return _refusing(build, lambda distinct, values: _OVER_FRAME_DISTINCT if distinct and refuses else None)


_OVER_FRAME_DISTINCT = "DISTINCT invocation over a window"


WINDOW: dict[str, WindowHandler] = {
    # functions_arithmetic.yaml window functions
    "row_number": _ranking(F.row_number, T.LongType()),
    "rank": _ranking(F.rank, T.LongType()),
    "dense_rank": _ranking(F.dense_rank, T.LongType()),
    "percent_rank": _ranking(F.percent_rank, T.DoubleType()),
    "cume_dist": _ranking(F.cume_dist, T.DoubleType()),
    "ntile": _ntile,
    "first_value": _value(lambda x: F.first(x, ignorenulls=False)),
    "last_value": _value(lambda x: F.last(x, ignorenulls=False)),
    "nth_value": _nth_value,
    "lag": _shift(-1),
    "lead": _shift(1),
    # aggregates as window functions (every entry of AGGREGATE)
    "sum": _sum,
    "sum0": _sum0,
    "avg": _avg,
    "count": _count,
    "string_agg": _string_agg,
    **{
        name: over_frame(name)
        for name in AGGREGATE
        if name not in {"sum", "sum0", "avg", "count", "string_agg"} and "/" not in name
    },
}


def resolve(
    window: Mapping[str, WindowHandler], aggregate: Mapping[str, Callable[[Call, bool], Column]], ref: FunctionRef
) -> WindowHandler | None:
    """The handler for a window call: most specific key first (`unsigned_integers/sum` before `sum`), at each
    key the window table's entry, else an aggregate table's entry applied over the frame."""
    for key in ref.keys:
        if key in window:
            return window[key]
        if key in aggregate:
            return over_frame(ref.base, aggregate[key])
    return None
