"""Window functions: `Expression.WindowFunction` (in a projection) and the functions of a
ConsistentPartitionWindowRel, as `F.<fn>(...).over(Window.partitionBy(...).orderBy(...).rowsBetween(...))`.

Frames follow the spec: a missing lower bound is the partition's start, a missing upper bound its end (not
SQL's default frame). An unspecified bounds type is ROWS without sort fields and RANGE with them (DataFusion's
reading). A RANGE frame over no sort fields makes every row a peer: its CURRENT ROW bounds are the whole
partition. Spark's DataFrame API takes RANGE offsets only as integers over one numeric sort key; other RANGE
offsets (intervals over dates, fractions) are refused with the bound's path.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from google.protobuf.message import Message
from pyspark.sql import Column
from pyspark.sql import types as T
from substrait import algebra_pb2 as alg

from ..errors import PlanInvalidError, UnsupportedFeatureError
from ..types import family, spark_type
from ..walk import children
from .expressions import function_arguments, options_of
from .functions.window import Over, WindowCall, resolve
from .literals import python_value
from .relations.aggregate import PHASES_OK
from .relations.sort import sort_columns
from .scope import Scope, Typed

if TYPE_CHECKING:
    from .consumer import SubstraitConsumer

WindowFunction = alg.Expression.WindowFunction
Bound = WindowFunction.Bound
_DISTINCT = alg.AggregateFunction.AGGREGATION_INVOCATION_DISTINCT
# Result types of the functions whose result type is not their first argument's (when output_type is unset).
_RESULT_TYPES: dict[str, T.DataType] = {
    "row_number": T.LongType(),
    "rank": T.LongType(),
    "dense_rank": T.LongType(),
    "percent_rank": T.DoubleType(),
    "cume_dist": T.DoubleType(),
    "count": T.LongType(),
    "approx_count_distinct": T.LongType(),
    "approx_distinct": T.LongType(),
    "avg": T.DoubleType(),
    "std_dev": T.DoubleType(),
    "variance": T.DoubleType(),
}


def _offset(b: Any, rows: bool, path: str) -> int:
    """A Preceding/Following bound's offset: `offset_expr` (a literal) if set, else `offset`."""
    if not b.HasField("offset_expr"):
        return b.offset
    e = b.offset_expr
    if e.WhichOneof("rex_type") != "literal":
        raise UnsupportedFeatureError("window bound offset computed by an expression (only literals)", path)
    value, _ = python_value(e.literal, f"{path}.offset_expr.literal")
    if value is None:
        raise PlanInvalidError("window bound offset is NULL", f"{path}.offset_expr")
    if not isinstance(value, int) or isinstance(value, bool):
        kind = "ROWS" if rows else "RANGE"
        raise UnsupportedFeatureError(
            f"{kind} window bound with a non-integer offset {value!r} (Spark takes integer offsets only)", path
        )
    return value


def _bound(b: Bound, has: bool, rows: bool, path: str) -> int | None:
    """Offset from the current row (negative: preceding); None for unbounded."""
    kind = b.WhichOneof("kind") if has else "unbounded"
    if kind == "preceding":
        return -_offset(b.preceding, rows, f"{path}.preceding")
    if kind == "following":
        return _offset(b.following, rows, f"{path}.following")
    if kind == "current_row":
        return 0
    if kind == "unbounded":
        return None
    raise PlanInvalidError("window bound with no kind set", path)


# The sort keys a RANGE frame with an offset can stand over (Spark's DataFrame API takes numeric offsets only).
RANGE_OFFSET_FAMILIES = frozenset({"int", "float", "decimal"})
SortKey = tuple[str | None, str]
"""A window sort key's type as `frame` reads it: its family (`types.family`; None: not known) and its name."""


def sort_key(t: T.DataType) -> SortKey:
    return family(t), t.simpleString()


def frame(fn: Any, sort_keys: Sequence[SortKey], path: str) -> tuple[bool, int | None, int | None]:
    """(ROWS?, lower, upper) of a WindowFunction or WindowRelFunction, as Spark can take it (static analysis
    passes the keys' types the plan states)."""
    kind = fn.bounds_type
    if kind not in (WindowFunction.BOUNDS_TYPE_UNSPECIFIED, WindowFunction.BOUNDS_TYPE_ROWS,
                    WindowFunction.BOUNDS_TYPE_RANGE):  # fmt: skip
        raise PlanInvalidError(f"unknown window bounds type {kind}", f"{path}.bounds_type")
    rows = kind == WindowFunction.BOUNDS_TYPE_ROWS or (kind == WindowFunction.BOUNDS_TYPE_UNSPECIFIED and not sort_keys)
    lower = _bound(fn.lower_bound, fn.HasField("lower_bound"), rows, f"{path}.lower_bound")
    upper = _bound(fn.upper_bound, fn.HasField("upper_bound"), rows, f"{path}.upper_bound")
    if rows:
        return True, lower, upper
    offsets = [x for x in (lower, upper) if x not in (None, 0)]
    if not sort_keys:
        if offsets:
            raise PlanInvalidError("RANGE window bound with an offset but no sort field", path)
        return True, None, None  # every row is a peer of the current row: the whole partition
    if offsets:
        if len(sort_keys) != 1:
            raise PlanInvalidError(f"RANGE window bound with an offset over {len(sort_keys)} sort fields", path)
        key_family, key_name = sort_keys[0]
        if key_family is not None and key_family not in RANGE_OFFSET_FAMILIES:
            raise UnsupportedFeatureError(
                f"RANGE window bound with an offset over a {key_name} sort key "
                "(Spark's DataFrame API takes numeric range offsets only)",
                path,
            )
    return False, lower, upper


# A window over a correlated subquery body would see the rows of every correlation key (the correlated
# predicates are applied above it, where the body joins its host).
CORRELATED = "window function inside a correlated subquery"
# Arguments Spark takes only as constants: function base name -> value argument positions.
_CONSTANT_ARGUMENTS = {"lag": (1,), "lead": (1,), "ntile": (0,), "nth_value": (1,)}


def static_findings(
    consumer_class: Any, ref: Any, fn: Any, sort_keys: Sequence[SortKey], path: str
) -> Iterator[tuple[str, str]]:
    """What translation would refuse, without Spark (for `analyze`): (feature, path) pairs. A malformed frame
    raises PlanInvalidError as translation would."""
    if fn.phase not in PHASES_OK:
        yield f"aggregation phase {alg.AggregationPhase.Name(fn.phase)}", f"{path}.phase"
    handler = resolve(consumer_class.window_functions, consumer_class.aggregate_functions, ref)
    if handler is None:
        yield f"window function {ref.name}", path
    refusal = getattr(handler, "static_refusal", None)  # what the handler refuses that the plan alone shows
    values = [a.value for a in fn.arguments if a.WhichOneof("arg_type") == "value"]
    if refusal is not None and (why := refusal(fn.invocation == _DISTINCT, len(values))):
        yield f"{ref.name}: {why}", path
    try:
        frame(fn, sort_keys, path)
    except UnsupportedFeatureError as exc:
        yield exc.message, exc.path or path
    for i in _CONSTANT_ARGUMENTS.get(ref.base, ()):
        if i < len(values) and values[i].WhichOneof("rex_type") != "literal":
            yield f"{ref.name}: argument {i + 1} computed by an expression (Spark takes only a constant)", path


def window_paths(e: Message, path: str) -> Iterator[str]:
    """Paths of the window functions in an expression evaluated over its own input (not in subquery bodies)."""
    if isinstance(e, WindowFunction):
        yield path
        return
    for child, p in children(e, path):
        if not isinstance(child, alg.Expression.Subquery):
            yield from window_paths(child, p)


def ordering(cx: SubstraitConsumer, sorts: Any, scope: Scope, path: str) -> tuple[list[Column], list[T.DataType]]:
    """A window's sort fields as Spark orderings, and the types of their keys (RANGE frames need them)."""
    orders = sort_columns(cx, sorts, scope, path)
    return orders, [cx.expression(s.expr, scope, f"{path}[{i}].expr").type for i, s in enumerate(sorts)]


def window_column(
    cx: SubstraitConsumer,
    fn: Any,
    partitions: list[Column],
    order: tuple[list[Column], list[T.DataType]],
    scope: Scope,
    path: str,
) -> Typed:
    """One window function (a WindowFunction or a WindowRelFunction) over the given partition and `ordering`."""
    ref = cx.extensions.function(fn.function_reference, f"{path}.function_reference")
    if fn.phase not in PHASES_OK:
        raise UnsupportedFeatureError(f"aggregation phase {alg.AggregationPhase.Name(fn.phase)}", f"{path}.phase")
    orders, sort_types = order
    rows, lower, upper = frame(fn, [sort_key(t) for t in sort_types], path)
    args = function_arguments(cx, fn.arguments, scope, path)
    out_type = spark_type(fn.output_type, f"{path}.output_type") if fn.HasField("output_type") else None
    call = WindowCall(
        ref,
        args,
        options_of(fn.options, ref, path),
        out_type,
        path,
        distinct=fn.invocation == _DISTINCT,
        over=Over(partitions, orders, rows, lower, upper),
    )
    col = cx.call_window(call)
    values = call.values
    default = _RESULT_TYPES.get(ref.base) or (values[0].type if values else T.LongType())
    return Typed(col, out_type or default)


def window_function(cx: SubstraitConsumer, fn: WindowFunction, scope: Scope, path: str) -> Typed:
    """`Expression.window_function`: its own partitions, sorts and frame."""
    if scope.rel.correlated():
        raise UnsupportedFeatureError(CORRELATED, path)
    partitions = [cx.expression(e, scope, f"{path}.partitions[{i}]").col for i, e in enumerate(fn.partitions)]
    return window_column(cx, fn, partitions, ordering(cx, fn.sorts, scope, f"{path}.sorts"), scope, path)
