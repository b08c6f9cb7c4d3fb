"""Aggregate functions: Substrait base name -> Spark aggregate column builder.

A builder gets the call with its (already filtered, see `relations/aggregate.py`) arguments and whether the
invocation is DISTINCT; it returns one native Spark aggregate expression.
"""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ...errors import PlanInvalidError
from ...types import cast, family
from .call import Call
from .decimal import DECIMAL_AGGREGATE, DECIMAL_AGGREGATE_OPTIONS
from .options import (
    IEEE_ROUNDING,
    OVERFLOW_OPTION,
    Option,
    OptionRule,
    always,
    bounds,
    ieee,
    int_output,
    overflow,
    when,
)
from .unsigned import UNSIGNED_AGGREGATE, UNSIGNED_AGGREGATE_OPTIONS

AggregateHandler = Callable[[Call, bool], Column]
DISTRIBUTION = Option("distribution", ("SAMPLE", "POPULATION"), "SAMPLE")  # older YAML; now an enum argument


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
    """avg keeps the argument's type (the YAML: avg(i32) -> i32?, avg(fp32) -> fp32?; Spark's is double). A
    declared floating-point result is averaged in double, not rounded first to Spark's decimal avg scale. Spark's
    avg of an integer already sums it in double (Average: a non-decimal child is cast to its double sum type), so
    an integer argument goes in as it is, as Spark SQL writes avg(x) (DISTINCT sums in double itself)."""
    (x,) = c.arity(1).values
    out = c.output_type or (x.type if family(x.type) in ("int", "float") else None)
    to_double = out is not None and family(out) == "float" and (distinct or family(x.type) != "int")
    src = x.col.cast("double") if to_double else x.col
    mean = F.sum_distinct(src) / F.count_distinct(src) if distinct else F.avg(src)
    if family(x.type) == "float":
        return ieee(c, mean)
    return cast(mean, out) if out is not None else mean


def _sum(zero_if_empty: bool) -> AggregateHandler:
    """sum/sum0 of integers honour `overflow` (Spark's bigint sum wraps): the exact sum is a decimal sum."""

    def build(c: Call, distinct: bool) -> Column:
        (x,) = c.arity(1).values
        agg = F.sum_distinct if distinct else F.sum
        total = agg(x.col)
        is_int = family(x.type) == "int"
        if is_int and c.read(OVERFLOW_OPTION) != "SILENT":
            out = c.output_type if c.output_type is not None and family(c.output_type) == "int" else T.LongType()
            exact = agg(x.col.cast("decimal(38,0)"))
            lo, hi = bounds(out)
            total = overflow(c, exact, out, exact > F.lit(hi), exact < F.lit(lo))
        elif is_int and c.output_type is not None:
            total = cast(total, c.output_type)
        return F.coalesce(total, F.lit(0).cast(_zero_type(c, x.type))) if zero_if_empty else total

    return build


def _zero_type(c: Call, arg: T.DataType) -> str:
    """sum0's type for the empty input's zero: the declared one, else bigint or double like Spark's sum."""
    if c.output_type is not None:
        return c.output_type.simpleString()
    return "bigint" if family(arg) == "int" else "double"


def _product(c: Call, distinct: bool) -> Column:
    """product keeps integer types (Spark's is double), `overflow` judged on the double product."""
    (x,) = c.arity(1).values
    if distinct:
        raise c.unsupported("DISTINCT invocation")
    value = F.product(x.col)
    if family(x.type) != "int":
        return ieee(c, value)
    out = int_output(c)
    lo, hi = bounds(out)
    return overflow(c, value, out, value > F.lit(float(hi)), value < F.lit(float(lo)))


def _by_distribution(sample: Callable[[Column], Column], population: Callable[[Column], Column]) -> AggregateHandler:
    """std_dev/variance: SAMPLE or POPULATION from the enum argument (current YAML) or the `distribution`
    option (older YAML); fp32 stays fp32."""

    def build(c: Call, distinct: bool) -> Column:
        if distinct:
            raise c.unsupported("DISTINCT invocation")
        (x,) = c.arity(1).cols
        enums = [e.upper() for e in c.enums]
        mode = enums[0] if enums else c.read(DISTRIBUTION)
        named = dict(c.ref.implied).get(DISTRIBUTION.name)  # a producer's name for it (`stddev_pop`)
        if named is not None and mode != named:
            raise PlanInvalidError(f"{c.ref.name} means {DISTRIBUTION.name} {named}, its argument says {mode}", c.path)
        if mode not in ("SAMPLE", "POPULATION") or len(enums) > 1:
            raise c.unsupported(f"distribution {'|'.join(c.enums)} (supported: SAMPLE, POPULATION)")
        return ieee(c, (sample if mode == "SAMPLE" else population)(x))

    return build


def _corr(c: Call, distinct: bool) -> Column:
    if distinct:
        raise c.unsupported("DISTINCT invocation")
    x, y = c.arity(2).cols
    return ieee(c, F.corr(x, y))


def _median(c: Call, distinct: bool) -> Column:
    """median(EXACT|APPROXIMATE, x): Spark's exact median (allowed for APPROXIMATE too), in the declared type."""
    if distinct:
        raise c.unsupported("DISTINCT invocation")
    (x,) = c.arity(1).values
    if any(e.upper() not in ("EXACT", "APPROXIMATE") for e in c.enums):
        raise c.unsupported(f"precision {'|'.join(c.enums)} (supported: EXACT, APPROXIMATE)")
    value = F.median(x.col)
    if family(x.type) == "float":
        return ieee(c, value)
    return c.declared(value)


def _string_agg(c: Call, distinct: bool) -> Column:
    x, sep = (*c.arity(1, 2).cols, F.lit(","))[:2]  # DuckDB writes string_agg(x): separator ','
    items = F.collect_set(x) if distinct else F.collect_list(x)
    return F.when(F.size(items) > 0, F.call_function("array_join", items, sep))  # separator may be a column


AGGREGATE: dict[str, AggregateHandler] = {
    "sum": _sum(zero_if_empty=False),
    "sum0": _sum(zero_if_empty=True),
    "avg": _avg,
    "min": _distinct_irrelevant(F.min),
    "max": _distinct_irrelevant(F.max),
    "count": _count,
    "any_value": _distinct_irrelevant(lambda x: F.first(x, ignorenulls=True)),
    "first": _distinct_irrelevant(lambda x: F.first(x, ignorenulls=True)),
    "median": _median,
    "corr": _corr,
    "mode": _simple(F.mode),
    "std_dev": _by_distribution(F.stddev_samp, F.stddev_pop),
    "variance": _by_distribution(F.var_samp, F.var_pop),
    "bool_and": _distinct_irrelevant(F.bool_and),
    "bool_or": _distinct_irrelevant(F.bool_or),
    "approx_count_distinct": _distinct_irrelevant(F.approx_count_distinct),
    "approx_distinct": _distinct_irrelevant(F.approx_count_distinct),
    "product": _product,
    "string_agg": _string_agg,
    **UNSIGNED_AGGREGATE,
}


def _decimal_or_generic(decimal: AggregateHandler, generic: AggregateHandler) -> AggregateHandler:
    """A decimal-extension declaration over a non-decimal argument (producers declare loosely) runs the generic one."""

    def build(c: Call, distinct: bool) -> Column:
        return (decimal if c.families() == ("decimal",) else generic)(c, distinct)

    return build


AGGREGATE.update(
    {key: _decimal_or_generic(h, AGGREGATE[key.rpartition("/")[2]]) for key, h in DECIMAL_AGGREGATE.items()}
)

# The options each handler above reads, by argument families (what `validate` checks; keys as AGGREGATE's).
_FLOAT = when({("float",): (IEEE_ROUNDING,)})
AGGREGATE_OPTIONS: dict[str, OptionRule] = {
    **dict.fromkeys(("sum", "sum0"), when({("int",): (OVERFLOW_OPTION,)})),
    "avg": _FLOAT,
    "median": _FLOAT,
    "product": when({("int",): (OVERFLOW_OPTION,)}, otherwise=(IEEE_ROUNDING,)),
    "corr": always(IEEE_ROUNDING),
    **dict.fromkeys(("std_dev", "variance"), always(DISTRIBUTION, IEEE_ROUNDING)),
    **UNSIGNED_AGGREGATE_OPTIONS,
}


def _decimal_or_generic_options(decimal: OptionRule, generic: OptionRule) -> OptionRule:
    """The options `_decimal_or_generic` reads: the decimal handler's for a decimal argument, else the generic's."""
    return lambda families: (decimal if families == ("decimal",) else generic)(families)


AGGREGATE_OPTIONS.update(
    {
        key: _decimal_or_generic_options(rule, AGGREGATE_OPTIONS.get(key.rpartition("/")[2], always()))
        for key, rule in DECIMAL_AGGREGATE_OPTIONS.items()
    }
)
