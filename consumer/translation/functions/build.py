"""Handler combinators shared by the function tables: most Substrait functions are one Spark call away."""

from __future__ import annotations

from collections.abc import Callable

from pyspark.sql import Column
from pyspark.sql import functions as F

from .call import Call, Handler


def sql(name: str) -> Handler:
    """A Spark SQL function of the same meaning, called by name with the value arguments."""
    return lambda c: F.call_function(name, *c.cols)


def unary(fn: Callable[[Column], Column]) -> Handler:
    return lambda c: fn(c.arity(1).cols[0])


def binary(fn: Callable[[Column, Column], Column]) -> Handler:
    def build(c: Call) -> Column:
        a, b = c.arity(2).cols
        return fn(a, b)

    return build


def balanced(fn: Callable[[Column, Column], Column], cols: list[Column]) -> Column:
    """`cols` combined pairwise as Spark's SQL parser combines a chain `a AND b AND c AND d` (AstBuilder's
    reduceToExpressionTree: ``(a AND b) AND (c AND d)``), not left-deep: inside an OR the optimizer keeps the tree it
    is given (the conjuncts it pushes into a scan keep their nesting), so the SQL's shape must be the plan's."""
    if len(cols) == 1:
        return cols[0]
    if len(cols) == 2:
        return fn(cols[0], cols[1])
    mid = (len(cols) - 1) // 2 + 1
    return fn(balanced(fn, cols[:mid]), balanced(fn, cols[mid:]))


def variadic(fn: Callable[[Column, Column], Column]) -> Handler:
    """A variadic boolean operator (and, or) as Spark SQL builds the same chain written as SQL."""

    def build(c: Call) -> Column:
        if not c.values:
            raise c.unsupported("needs at least one argument")
        return balanced(fn, list(c.cols))

    return build


def cast_to_output(fn: Handler) -> Handler:
    """Spark returns a wider type than Substrait declares (sign, ceil, power on integers): cast back."""

    def build(c: Call) -> Column:
        return c.declared(fn(c))

    return build


def substring(s: Column, start: Column, *length: Column) -> Column:
    """Spark's `substring` by that name: `substr` is its alias, and Catalyst keeps the name it was called by, so
    only this one prints (and compares) as the expression Spark SQL's `substring(...)` makes."""
    return F.call_function("substring", s, start, *length)
