"""`x = a OR x = b OR ...` as Spark's `x IN (a, b, ...)`.

Calcite (Isthmus) expands a SQL IN list into a disjunction of equalities. Spark SQL keeps `In`, and its
optimizer and file sources treat the two differently: `In` is pushed to Parquet as one `In` filter (and turns
into a hash set past `spark.sql.optimizer.inSetConversionThreshold` items), an OR chain is evaluated
disjunct by disjunct. Both mean the same, NULLs included: a NULL `x` makes every equality and the `In` NULL;
with no match, a NULL item makes both NULL, otherwise both are false.

The rewrite applies only when the `or` and every `equal` are the functions our handler tables would call for
them (a registry may override either), every disjunct compares the same expression (a field reference, a cast
of one, a deterministic function of fields and literals) with a literal of that expression's own type (no
coercion that `In` could resolve differently), and there are at least two items.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import types as T
from substrait import algebra_pb2 as alg

from .functions import lookup
from .functions.comparison import COMPARISON
from .scope import Scope, Typed

if TYPE_CHECKING:
    from .consumer import SubstraitConsumer

Expression = alg.Expression

_OR = COMPARISON["or"]
_EQUAL = COMPARISON["equal"]


Located = tuple[Expression, str]  # an expression and its plan path


def _handler(cx: SubstraitConsumer, fn: Expression.ScalarFunction) -> object | None:
    """The scalar handler `fn` calls, or None for an undeclared function."""
    ref = cx.extensions.functions.get(fn.function_reference)
    return lookup(cx.scalar_functions, ref) if ref is not None else None


def _call(cx: SubstraitConsumer, e: Expression, handler: object) -> Expression.ScalarFunction | None:
    """`e` as a call of `handler`, or None."""
    if e.WhichOneof("rex_type") != "scalar_function" or _handler(cx, e.scalar_function) is not handler:
        return None
    return e.scalar_function


def _values(fn: Expression.ScalarFunction, path: str) -> list[Located] | None:
    """The value arguments of `fn` (at `path`) with their paths; None when it has any other kind of argument."""
    out = []
    for i, a in enumerate(fn.arguments):
        if a.WhichOneof("arg_type") != "value":
            return None
        out.append((a.value, f"{path}.arguments[{i}].value"))
    return out


def _disjuncts(cx: SubstraitConsumer, fn: Expression.ScalarFunction, path: str) -> list[Located] | None:
    """The leaves of a tree of `or` calls, each with its path (None: some argument is not a plain value)."""
    args = _values(fn, path)
    if args is None:
        return None
    out: list[Located] = []
    for a, p in args:
        inner = _call(cx, a, _OR)
        leaves = [(a, p)] if inner is None else _disjuncts(cx, inner, f"{p}.scalar_function")
        if leaves is None:
            return None
        out.extend(leaves)
    return out


def _field_and_literal(cx: SubstraitConsumer, e: Expression, path: str) -> tuple[Located, Located] | None:
    """`(field, literal)` with their paths when `e` is `field = literal` or `literal = field`, else None."""
    fn = _call(cx, e, _EQUAL)
    if fn is None or fn.options:
        return None
    args = _values(fn, f"{path}.scalar_function")
    if args is None or len(args) != 2:
        return None
    first, second = args
    if _is_field(cx, first[0]) and second[0].WhichOneof("rex_type") == "literal":
        return first, second
    if first[0].WhichOneof("rex_type") == "literal" and _is_field(cx, second[0]):
        return second, first
    return None


# Functions of a row's values only (the same on every evaluation), which a subject may apply to its fields.
_DETERMINISTIC = frozenset({"substring", "substr", "upper", "lower", "trim", "ltrim", "rtrim", "extract", "concat"})


def _is_field(cx: SubstraitConsumer, e: Expression) -> bool:
    """A field reference, a cast of one (Calcite casts a CHAR column to the literal's VARCHAR), or a deterministic
    function of one and literals (`substring(c_phone, 1, 2)`): an expression whose value the IN reads once."""
    kind = e.WhichOneof("rex_type")
    if kind == "selection":
        return True
    if kind == "cast":
        return _is_field(cx, e.cast.input)
    if kind != "scalar_function":
        return False
    ref = cx.extensions.functions.get(e.scalar_function.function_reference)
    args = _values(e.scalar_function, "")
    if ref is None or ref.base not in _DETERMINISTIC or args is None:
        return False
    kinds = [a.WhichOneof("rex_type") for a, _ in args]
    return all(k == "literal" or _is_field(cx, a) for (a, _), k in zip(args, kinds, strict=True)) and any(
        k != "literal" for k in kinds
    )


def in_list(cx: SubstraitConsumer, fn: Expression.ScalarFunction, scope: Scope, path: str) -> Typed | None:
    """`fn` (at `path`) as `field.isin(literals)` when it is an `or` of equalities of one field with literals
    of its type; None otherwise (it is then translated as written)."""
    if _handler(cx, fn) is not _OR:
        return None
    leaves = _disjuncts(cx, fn, path)
    if leaves is None or len(leaves) < 2:
        return None
    pairs = []
    for x, p in leaves:
        pair = _field_and_literal(cx, x, p)
        if pair is None:
            return None
        pairs.append(pair)
    (field, field_path), _ = pairs[0]
    if any(f != field for (f, _), _ in pairs):
        return None
    subject = cx.expression(field, scope, field_path)
    items = [cx.expression(lit, scope, lit_path) for _, (lit, lit_path) in pairs]
    if any(item.type != subject.type for item in items):
        return None
    return Typed(subject.col.isin(*[item.col for item in items]), T.BooleanType())
