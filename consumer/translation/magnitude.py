"""An upper bound of a numeric expression's absolute value over every row, read from its literals and the types of
the columns it reads — for a cast that must fail on overflow (THROW_EXCEPTION) and provably cannot.

DataFusion writes a decimal literal of the SQL text as fp64 and casts the product back to decimal:
`CAST(1.2 * CAST(avg(x) AS DOUBLE) AS DECIMAL(30,15))`. Spark's cast gives NULL where a value does not fit, so the
cast is checked at run time (`expressions.cast`), and that check is a CASE Spark SQL's plan lacks. Where the
operands' types bound the value (a decimal(21,6) average is under 10^15; times 1.2 it still fits 15 integer
digits), the check can never fire and is left out. Only literals, columns, casts and + - * are followed; anything
else (a division, a function, a subquery) has no bound, nor a float column but one a projection below computed
from bounded operands (`SubstraitConsumer.column_bounds`: `CAST(avg(x) AS DOUBLE)` joined to the rows it bounds)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from pyspark.sql import types as T
from substrait import algebra_pb2 as alg

from ..errors import SubstraitSparkError
from ..types import INT_RANGE
from ..walk import plain_field
from .literals import python_value
from .scope import Scope

if TYPE_CHECKING:
    from .consumer import SubstraitConsumer

Expression = alg.Expression
Bound = float | None

# The bound of a binary function's value from its operands' bounds.
_BOUND_OF: dict[str, Callable[[float, float], float]] = {
    "multiply": lambda a, b: a * b,
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a + b,
}


def of_type(t: T.DataType) -> Bound:
    """The largest absolute value of a type: decimal(p, s) under 10^(p-s); integers by width; floats unbounded."""
    if isinstance(t, T.DecimalType):
        return float(10 ** (t.precision - t.scale))
    if type(t) in INT_RANGE:
        lo, hi = INT_RANGE[type(t)]
        return float(max(-lo, hi))
    return None


def magnitude(cx: SubstraitConsumer, e: Expression, scope: Scope, path: str) -> Bound:
    """An upper bound of |e| on every row, or None where none is known."""
    kind = e.WhichOneof("rex_type")
    if kind == "literal":
        try:
            value, _ = python_value(e.literal, path)
        except SubstraitSparkError:  # a literal with no plain value (a nested one, a bad one): no bound
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            return abs(float(value))
        return None
    if kind == "selection":
        typed = of_type(cx.expression(e, scope, path).type)
        i = plain_field(e)
        if typed is not None or i is None or not 0 <= i < len(scope.rel.names):
            return typed
        return cx.column_bounds.get(scope.rel.names[i])  # a float a projection below computed (its name is its own)
    if kind == "cast":
        # A cast keeps the magnitude (a narrowing one that cannot hold it fails or is checked itself).
        return magnitude(cx, e.cast.input, scope, f"{path}.cast.input")
    if kind == "scalar_function":
        fn = e.scalar_function
        combine = _BOUND_OF.get(cx.extensions.function(fn.function_reference, f"{path}.function_reference").base)
        values = [a.value for a in fn.arguments if a.WhichOneof("arg_type") == "value"]
        if combine is None or len(values) != 2 or len(fn.arguments) != 2:
            return None
        a = magnitude(cx, values[0], scope, f"{path}.scalar_function.arguments[0].value")
        b = magnitude(cx, values[1], scope, f"{path}.scalar_function.arguments[1].value")
        return None if a is None or b is None else combine(a, b)
    return None


def fits_decimal(bound: Bound, target: T.DataType) -> bool:
    """Whether every value under `bound` fits `target`, a decimal, with a margin for binary floating point's
    rounding and for rounding to the target's scale."""
    if not isinstance(target, T.DecimalType) or bound is None:
        return False
    return bound * 2 < 10 ** (target.precision - target.scale)
