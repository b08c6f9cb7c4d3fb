"""AggregateRel: grouping sets (with the grouping-set index column), measure filters, DISTINCT."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from substrait import algebra_pb2 as alg

from ...errors import PlanInvalidError, UnsupportedFeatureError
from ...loading.extensions import FunctionRef
from ...types import family, spark_type
from ...walk import plain_field
from ..expressions import function_arguments, options_of
from ..functions import Call
from ..functions.options import IEEE_ROUNDING
from ..relation import Correlation, Relation, column, union_all
from ..scope import Scope, Typed
from . import grouping_sets

if TYPE_CHECKING:
    from ..consumer import SubstraitConsumer

AggregateFunction = alg.AggregateFunction
PHASES_OK = (alg.AGGREGATION_PHASE_UNSPECIFIED, alg.AGGREGATION_PHASE_INITIAL_TO_RESULT)
# Functions whose result does not depend on input order: their `sorts` can be ignored.
_ORDER_INSENSITIVE = {
    "sum",
    "sum0",
    "avg",
    "min",
    "max",
    "count",
    "median",
    "mode",
    "std_dev",
    "variance",
    "bool_and",
    "bool_or",
    "approx_count_distinct",
    "approx_distinct",
    "product",
    "any_value",
}
COUNTS = {"count", "approx_count_distinct", "approx_distinct"}
"""Aggregates that count (their value over no rows is 0, not NULL: a decorrelated subquery must fix it up)."""


def function_refusals(ref: FunctionRef, fn: AggregateFunction, path: str) -> Iterator[tuple[str, str]]:
    """What an aggregate call is refused for whatever its handler: a phase other than the whole aggregation, and
    an order over an order-dependent function. (The translator and `analyze` read it.)"""
    if fn.phase not in PHASES_OK:
        yield f"aggregation phase {alg.AggregationPhase.Name(fn.phase)}", f"{path}.phase"
    if len(fn.sorts) and ref.base not in _ORDER_INSENSITIVE:
        yield f"ordered aggregate {ref.name}", f"{path}.sorts"


def _grouping_keys(cx: SubstraitConsumer, rel: alg.AggregateRel, scope: Scope, path: str):
    """Distinct key expressions and, per grouping set, the indexes of its keys.

    (The deprecated inline Grouping.grouping_expressions were read as references by the loader.)
    """
    exprs = rel.grouping_expressions
    keys = [cx.expression(e, scope, f"{path}.grouping_expressions[{i}]") for i, e in enumerate(exprs)]
    sets = []
    for g, grouping in enumerate(rel.groupings):
        for r in grouping.expression_references:
            if not 0 <= r < len(keys):
                raise PlanInvalidError(f"grouping expression reference {r} out of range", f"{path}.groupings[{g}]")
        sets.append(list(grouping.expression_references))
    return keys, sets


def measure_column(cx: SubstraitConsumer, m: alg.AggregateRel.Measure, scope: Scope, path: str) -> Typed:
    fn = m.measure
    p = f"{path}.measure"
    ref = cx.extensions.function(fn.function_reference, f"{p}.function_reference")
    for feature, at in function_refusals(ref, fn, p):
        raise UnsupportedFeatureError(feature, at)
    integer = _unwidened_avg(cx, ref, fn, scope, p)
    args: list[Typed | str] = function_arguments(cx, fn.arguments, scope, p) if integer is None else [integer]
    if m.HasField("filter"):
        cond = cx.expression(m.filter, scope, f"{path}.filter").col
        args = [Typed(F.when(cond, a.col), a.type) if isinstance(a, Typed) else a for a in args]
        if ref.base == "count" and not any(isinstance(a, Typed) for a in args):
            args = [Typed(F.when(cond, F.lit(1)), T.IntegerType())]
    out_type = spark_type(fn.output_type, f"{p}.output_type") if fn.HasField("output_type") else None
    if integer is not None:
        out_type = T.DoubleType()  # the plan's avg of an fp64
    call = Call(ref, args, options_of(fn.options, ref, p), out_type, p)
    distinct = fn.invocation == AggregateFunction.AGGREGATION_INVOCATION_DISTINCT
    col = cx.call_aggregate(call, distinct)
    values = call.values
    return Typed(col, out_type or (values[0].type if values else T.LongType()))


def _unwidened_avg(
    cx: SubstraitConsumer, ref: FunctionRef, fn: AggregateFunction, scope: Scope, path: str
) -> Typed | None:
    """The integer column x of avg(cast(x AS fp64)), the cast in the call or in the pending projection below
    (`ProjectRel`: `SubstraitConsumer.widened_integers`), when avg(x) gives the same result bit for bit: then the
    aggregate reads avg(x), Spark SQL's spelling of the text's avg(x) (DataFusion writes the widening cast).

    Spark's Average sums a non-decimal child in double, each value cast to double as it is added (its update is
    `sum + coalesce(cast(child AS double), 0)`, Spark 3.5 and 4), then divides by the count: over x it casts each
    value exactly as the plan's cast does, in the same order, and a double's cast to double is none. An integer's
    cast to fp64 cannot fail, so its failure behaviour is moot. Not for DISTINCT (two bigints may round to one
    double), nor a result declared other than fp64, nor a rounding preference Spark cannot honour (the float
    argument reads it, `functions/aggregate.py` _avg). None otherwise."""
    args = fn.arguments
    declared = fn.output_type.WhichOneof("kind") if fn.HasField("output_type") else "fp64"
    if ref.base != "avg" or fn.invocation == AggregateFunction.AGGREGATION_INVOCATION_DISTINCT or declared != "fp64":
        return None
    rounding = options_of(fn.options, ref, path).get(IEEE_ROUNDING.name, [])
    if len(args) != 1 or args[0].WhichOneof("arg_type") != "value" or IEEE_ROUNDING.choose(rounding) is None:
        return None
    e = args[0].value
    if e.WhichOneof("rex_type") == "cast":
        if e.cast.type.WhichOneof("kind") != "fp64" or plain_field(e.cast.input) is None:
            return None
        x = cx.expression(e.cast.input, scope, f"{path}.arguments[0].value.cast.input")
        return x if family(x.type) == "int" else None
    i = plain_field(e)
    source = scope.rel
    if i is None or not 0 <= i < len(source.names) or source.projection is None:
        return None
    widened = cx.widened_integers.get(source.names[i])
    # The very cast the projection still holds: the integer is a column over the same frame.
    if widened is None or source.projection.exprs.get(source.names[i]) is not widened.cast:
        return None
    return widened.integer


def _groups_by_computed(cx: SubstraitConsumer, rel: alg.AggregateRel, source: Relation) -> bool:
    """Whether a grouping key is a column that a projection still pending below computes.

    Then the projection is applied below the aggregate, as a SQL derived table stands below its GROUP BY: Spark
    SQL evaluates a computed key in a Project under the Aggregate anyway (PullOutGroupingExpressions), and built
    from the plan's projection that Project holds the plan's columns in the plan's order, the measures' computed
    arguments included (`sum(amount)` over `... AS amount`). With plain-column keys the projection stays inline:
    `sum(a * b)` evaluated in the aggregate, as SQL writes it."""
    if source.projection is None:
        return False
    fields = [plain_field(e) for e in rel.grouping_expressions]
    return any(i is not None and 0 <= i < len(source.names) and source.names[i] in cx.computed_columns for i in fields)


def _input_columns(source: Relation, exprs: Sequence[alg.Expression]) -> list[str | None]:
    """Per key, the input frame's column it is as it is, or None (computed; bound to its frame, `Projection.bound`;
    or its name shared with another key's column, which the aggregate's output could not tell apart)."""
    fields = [plain_field(e) for e in exprs]
    out = [source.frame_column(source.names[i]) if i is not None and 0 <= i < len(source) else None for i in fields]
    bound = source.projection.bound if source.projection is not None else frozenset()
    out = [None if n is not None and n.lower() in bound else n for n in out]  # read through its frame: aliased
    named = [n.lower() for n in out if n is not None]
    return out if len(named) == len(set(named)) else [None] * len(out)


def translate_aggregate(cx: SubstraitConsumer, rel: alg.AggregateRel, path: str, outer: Scope | None) -> Relation:
    rel = cx.quirks.as_written(rel)
    source = cx.rel(rel.input, f"{path}.input", outer)
    if _groups_by_computed(cx, rel, source):
        source = source.materialized()
    scope = Scope(source, outer)
    keys, sets = _grouping_keys(cx, rel, scope, path)
    measures = [measure_column(cx, m, scope, f"{path}.measures[{i}]") for i, m in enumerate(rel.measures)]
    if scope.rel is not source:
        raise UnsupportedFeatureError("subquery inside an aggregate's keys or measures", path)
    if not sets:
        sets = [[]]  # no groupings: one global group

    # Correlated subquery body: the correlation keys become grouping keys (only for equality predicates).
    absorbed: list[str] = []
    if source.correlated():
        if any(p.equality is None for p in source.pending):
            raise UnsupportedFeatureError(
                "aggregate over a non-equality correlated predicate (cannot be decorrelated)", path
            )
        absorbed = list(dict.fromkeys(p.equality for p in source.pending if p.equality is not None))
        if len(sets) > 1:
            raise UnsupportedFeatureError("grouping sets inside a correlated subquery", path)

    given = cx.output_names.get(path)  # the plan's output names, for the root's columns this aggregate computes
    if given is None or len(given) != len(keys) + len(measures) or len(sets) != 1 or absorbed:
        given = [None] * (len(keys) + len(measures))
    key_names = [n or cx.names.fresh() for n in given[: len(keys)]]
    measure_names = [n or cx.names.fresh() for n in given[len(keys) :]]
    extra = [column(n) for n in absorbed]
    extra_in = source.named_cols(absorbed)  # over the source's frame (its projection may be pending)

    def one_set(index: list[int], for_union: bool) -> DataFrame:
        group_cols = [keys[k].col.alias(key_names[k]) for k in dict.fromkeys(index)]
        aggs = [m.col.alias(n) for m, n in zip(measures, measure_names, strict=True)]
        grouped = source.frame.groupBy(*group_cols, *extra_in)
        df = grouped.agg(*aggs) if aggs else source.frame.select(*group_cols, *extra_in).distinct()
        present = {key_names[k] for k in index}
        if not for_union and len(present) == len(key_names) and not extra:
            return df  # columns are found by name: no reordering select needed
        # A correlated body's absorbed keys come after its columns, as in the aggregate Spark SQL decorrelates a
        # subquery to (a broadcast of it packs the join keys by position).
        fill = [
            (column(n) if n in present else F.lit(None).cast(keys[k].type).alias(n)) for k, n in enumerate(key_names)
        ]
        return df.select(*fill, *[column(n) for n in measure_names], *extra)

    names = [*key_names, *measure_names]
    types = [k.type for k in keys] + [m.type for m in measures]
    if len(sets) == 1:
        df = one_set(sets[0], for_union=False)
    else:
        refusal = cx.quirks.grouping_id_refusal(sets, len(keys))
        if refusal:
            raise UnsupportedFeatureError(refusal, path)
        gid = cx.names.fresh()
        cx.grouping_index_columns.add(gid)
        ids = cx.quirks.grouping_set_ids(sets, len(keys))  # the set's index, or the producer's grouping id
        sets_api = hasattr(type(source.frame), "groupingSets")  # of the class: a 3.5 Connect frame asks the server
        shape = grouping_sets.shape_of(sets, len(keys), sets_api)
        if shape is not None:
            spark_id = cx.names.fresh()
            df = grouping_sets.grouped_frame(
                source.frame,
                shape,
                sets,
                [
                    grouping_sets.Key(k.col, k.type, n, c)
                    for k, n, c in zip(keys, key_names, _input_columns(source, rel.grouping_expressions), strict=True)
                ],
                [(m.col, n) for m, n in zip(measures, measure_names, strict=True)],
                spark_id,
            )
            set_col = grouping_sets.set_column(shape, sets, ids, column(spark_id))
            df = df.select(*[column(n) for n in names], set_col.alias(gid))
        else:
            parts = [one_set(s, for_union=True).withColumn(gid, F.lit(i)) for i, s in zip(ids, sets, strict=True)]
            df = functools.reduce(union_all, parts)
            df = df.select(*[column(n) for n in names], F.col(gid), *extra)
        at = len(key_names) if cx.quirks.grouping_index_first(rel) else len(names)
        names.insert(at, gid)
        types.insert(at, T.IntegerType())
    keyed = bool(absorbed) and not keys
    count_bug = bool(absorbed) and any(
        cx.extensions.function(m.measure.function_reference, path).base in COUNTS for m in rel.measures
    )
    return Relation(df, names, types, Correlation(source.pending, tuple(absorbed), keyed, count_bug))
