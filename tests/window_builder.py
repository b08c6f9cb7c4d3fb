"""Builders for window functions: `Expression.window_function` and ConsistentPartitionWindowRel (see plan_builder)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plan_builder import Expr, PlanBuilder, Rel, SortField, Type, _common, alg

WindowFunction = Expr.WindowFunction
Bound = WindowFunction.Bound
ROWS = WindowFunction.BOUNDS_TYPE_ROWS
RANGE = WindowFunction.BOUNDS_TYPE_RANGE
UNSPECIFIED = WindowFunction.BOUNDS_TYPE_UNSPECIFIED
_INVOCATION = alg.AggregateFunction.AggregationInvocation


def preceding(n: int | Expr) -> Bound:
    """`n PRECEDING`: an int fills `offset`, an expression `offset_expr`."""
    b = Bound()
    if isinstance(n, int):
        b.preceding.offset = n
    else:
        b.preceding.offset_expr.CopyFrom(n)
    return b


def following(n: int | Expr) -> Bound:
    b = Bound()
    if isinstance(n, int):
        b.following.offset = n
    else:
        b.following.offset_expr.CopyFrom(n)
    return b


def current_row() -> Bound:
    return Bound(current_row=Bound.CurrentRow())


def unbounded() -> Bound:
    return Bound(unbounded=Bound.Unbounded())


def _fill(
    fn: Any,
    b: PlanBuilder,
    name: str,
    args: Sequence[Expr | str],
    out: Type | None,
    distinct: bool,
    options: dict[str, Sequence[str]] | None,
    bounds: int,
    lower: Bound | None,
    upper: Bound | None,
) -> None:
    fn.function_reference = b.fn(name)
    fn.arguments.extend(b._arguments(args))
    fn.options.extend(b._options(options))
    fn.phase = alg.AGGREGATION_PHASE_INITIAL_TO_RESULT
    fn.invocation = _INVOCATION.AGGREGATION_INVOCATION_DISTINCT if distinct else _INVOCATION.AGGREGATION_INVOCATION_ALL
    fn.bounds_type = bounds
    if out is not None:
        fn.output_type.CopyFrom(out)
    if lower is not None:
        fn.lower_bound.CopyFrom(lower)
    if upper is not None:
        fn.upper_bound.CopyFrom(upper)


def window(
    b: PlanBuilder,
    name: str,
    *args: Expr | str,
    partitions: Sequence[Expr] = (),
    sorts: Sequence[tuple[Expr, int]] = (),
    bounds: int = ROWS,
    lower: Bound | None = None,
    upper: Bound | None = None,
    out: Type | None = None,
    distinct: bool = False,
    options: dict[str, Sequence[str]] | None = None,
) -> Expr:
    """An `Expression.window_function`: `name(args) OVER (PARTITION BY .. ORDER BY .. <bounds> lower..upper)`."""
    fn = WindowFunction(partitions=list(partitions), sorts=[SortField(expr=e, direction=d) for e, d in sorts])
    _fill(fn, b, name, args, out, distinct, options, bounds, lower, upper)
    return Expr(window_function=fn)


def window_rel_function(
    b: PlanBuilder,
    name: str,
    *args: Expr | str,
    bounds: int = ROWS,
    lower: Bound | None = None,
    upper: Bound | None = None,
    out: Type | None = None,
    distinct: bool = False,
    options: dict[str, Sequence[str]] | None = None,
) -> alg.ConsistentPartitionWindowRel.WindowRelFunction:
    fn = alg.ConsistentPartitionWindowRel.WindowRelFunction()
    _fill(fn, b, name, args, out, distinct, options, bounds, lower, upper)
    return fn


def window_rel(
    input: Rel,
    functions: Sequence[alg.ConsistentPartitionWindowRel.WindowRelFunction],
    partitions: Sequence[Expr] = (),
    sorts: Sequence[tuple[Expr, int]] = (),
    emit: Sequence[int] | None = None,
) -> Rel:
    """A ConsistentPartitionWindowRel: the input's columns, then one column per function."""
    body = alg.ConsistentPartitionWindowRel(
        input=input,
        window_functions=list(functions),
        partition_expressions=list(partitions),
        sorts=[SortField(expr=e, direction=d) for e, d in sorts],
    )
    _common(body, emit)
    return Rel(window=body)
