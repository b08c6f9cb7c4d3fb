"""Expression lineage: each handler takes the walker, the expression's message, the scope and the plan path, and
returns the value's `Sources`.

- A field reference is its column's lineage as is (IDENTITY composes to nothing); an outer reference reads the
  record of an enclosing query (`steps_out`); a part of a nested value (struct field, list element, map value) is
  a TRANSFORMATION of its column.
- Functions, casts, nested constructors, IN lists: DIRECT TRANSFORMATION of their arguments (masking for hashes).
- IF / CASE: conditions (and a switch's match) are INDIRECT CONDITIONAL, results DIRECT TRANSFORMATION;
  COALESCE-like functions are both for each argument.
- Window functions: arguments DIRECT AGGREGATION, partitions and ordering INDIRECT WINDOW.
- Subqueries: the body's output columns (scalar value, IN haystack, set comparison, UNIQUE) as TRANSFORMATION,
  plus whatever decides the body's rows (its filters, joins, grouping — outer references included); EXISTS only
  the latter. Where the subquery is used (a filter) composes the rest.
- Literals, dynamic parameters, enums, lambda parameters: no input.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from substrait import algebra_pb2 as alg
from substrait import type_pb2 as tp

from ...errors import PlanInvalidError
from ...plan_visitor import subquery_body
from ...walk import named_lambda
from ...walk import value_args_at as value_args
from .model import (
    AGGREGATION,
    CONDITIONAL,
    NONE,
    TRANSFORMATION,
    WINDOW,
    Scope,
    Sources,
    Transformation,
    apply,
    masked,
    merge,
)

if TYPE_CHECKING:
    from .walker import LineageWalker

Expression = alg.Expression
Subquery = Expression.Subquery
# fn(walker, the expression oneof's message — its class is the key's, which no static type can say —, scope, path)
ExprHandler = Callable[["LineageWalker", Any, Scope, str], Sources]

# Functions whose result hides its input's value (OpenLineage's masking): hashes, and counts.
MASKING_SCALAR = frozenset({"hash", "md5", "sha1", "sha2", "sha256", "sha512", "crc32", "xxhash64", "murmur3"})
MASKING_AGGREGATE = frozenset({"count", "count_distinct", "approx_count_distinct", "approx_distinct"})
# Functions that choose between their arguments by their values (SQL's COALESCE family): each argument is both
# a possible result and a condition.
CONDITIONAL_FUNCTIONS = frozenset({"coalesce", "ifnull", "nvl", "nullif"})


def each(w: LineageWalker, t: Transformation, exprs: list[tuple[Expression, str]], scope: Scope) -> dict:
    """The lineage of a value computed by a step of kind `t` from the expressions `exprs`."""
    return merge(*(apply(t, w.expr(e, scope, p)) for e, p in exprs))


# --- field references --------------------------------------------------------------------------------------


def selection(w: LineageWalker, ref: Expression.FieldReference, scope: Scope, path: str) -> Sources:
    root = ref.WhichOneof("root_type")
    if root == "lambda_parameter_reference":
        return NONE  # a lambda's parameter: its values come from the call's other arguments
    if root == "expression":
        base = w.expr(ref.expression, scope, f"{path}.expression")
        return apply(TRANSFORMATION, base)
    target: Scope | None = scope
    if root == "outer_reference":
        steps = ref.outer_reference.steps_out
        target = scope.up(steps) if steps > 0 else None
        if target is None:
            raise PlanInvalidError(f"outer reference steps_out={steps} has no enclosing query", path)
    assert target is not None
    kind = ref.WhichOneof("reference_type")
    if kind == "masked_reference":
        items = ref.masked_reference.select.struct_items
        return merge(*(apply(TRANSFORMATION, _column(target, item.field, path).sources) for item in items))
    if kind != "direct_reference":
        raise PlanInvalidError("field reference without a reference segment", path)
    seg = ref.direct_reference
    if seg.WhichOneof("reference_type") != "struct_field":
        raise PlanInvalidError("a root field reference must start with a struct field", path)
    col = _column(target, seg.struct_field.field, path)
    return apply(TRANSFORMATION, col.sources) if seg.struct_field.HasField("child") else col.sources


def _column(scope: Scope, i: int, path: str):
    if not 0 <= i < len(scope.columns):
        raise PlanInvalidError(f"field reference {i} out of range: the input has {len(scope.columns)} columns", path)
    return scope.columns[i]


# --- functions ---------------------------------------------------------------------------------------------


def scalar_function(w: LineageWalker, fn: Expression.ScalarFunction, scope: Scope, path: str) -> Sources:
    ref = w.extensions.function(fn.function_reference, f"{path}.function_reference")
    args = value_args(fn, path)
    t = masked(TRANSFORMATION) if ref.base in MASKING_SCALAR else TRANSFORMATION
    out = each(w, t, args, scope)
    if ref.base in CONDITIONAL_FUNCTIONS:
        out = merge(out, each(w, CONDITIONAL, args, scope))
    return out


def aggregation(w: LineageWalker, fn, scope: Scope, path: str) -> dict:
    """An aggregate or window function's own arguments: DIRECT AGGREGATION (masking for counts)."""
    ref = w.extensions.function(fn.function_reference, f"{path}.function_reference")
    t = masked(AGGREGATION) if ref.base in MASKING_AGGREGATE else AGGREGATION
    return each(w, t, value_args(fn, path), scope)


def sort_keys(sorts, path: str) -> list[tuple[Expression, str]]:
    return [(s.expr, f"{path}[{i}].expr") for i, s in enumerate(sorts)]


def window_function(w: LineageWalker, fn: Expression.WindowFunction, scope: Scope, path: str) -> Sources:
    partitions = [(e, f"{path}.partitions[{i}]") for i, e in enumerate(fn.partitions)]
    return merge(
        aggregation(w, fn, scope, path),
        each(w, WINDOW, partitions + sort_keys(fn.sorts, f"{path}.sorts"), scope),
    )


# --- conditionals ------------------------------------------------------------------------------------------


def if_then(w: LineageWalker, e: Expression.IfThen, scope: Scope, path: str) -> Sources:
    conditions = [(getattr(c, "if"), f"{path}.ifs[{i}].if") for i, c in enumerate(e.ifs)]
    operand = w.quirks.case_operand(e)  # a simple CASE's operand clause has no result
    results = [(c.then, f"{path}.ifs[{i}].then") for i, c in enumerate(e.ifs) if i or not operand]
    if e.HasField("else"):
        results.append((getattr(e, "else"), f"{path}.else"))
    return merge(each(w, CONDITIONAL, conditions, scope), each(w, TRANSFORMATION, results, scope))


def switch_expression(w: LineageWalker, e: Expression.SwitchExpression, scope: Scope, path: str) -> Sources:
    results = [(c.then, f"{path}.ifs[{i}].then") for i, c in enumerate(e.ifs)]
    if e.HasField("else"):
        results.append((getattr(e, "else"), f"{path}.else"))
    match = apply(CONDITIONAL, w.expr(e.match, scope, f"{path}.match")) if e.HasField("match") else NONE
    return merge(match, each(w, TRANSFORMATION, results, scope))  # the `if` values are literals


def singular_or_list(w: LineageWalker, e: Expression.SingularOrList, scope: Scope, path: str) -> Sources:
    options = [(o, f"{path}.options[{i}]") for i, o in enumerate(e.options)]
    return each(w, TRANSFORMATION, [(e.value, f"{path}.value"), *options], scope)


def multi_or_list(w: LineageWalker, e: Expression.MultiOrList, scope: Scope, path: str) -> Sources:
    values = [(v, f"{path}.value[{i}]") for i, v in enumerate(e.value)]
    options = [
        (f, f"{path}.options[{r}].fields[{i}]") for r, rec in enumerate(e.options) for i, f in enumerate(rec.fields)
    ]
    return each(w, TRANSFORMATION, values + options, scope)


# --- other value expressions -------------------------------------------------------------------------------


def cast(w: LineageWalker, e: Expression.Cast, scope: Scope, path: str) -> Sources:
    return apply(TRANSFORMATION, w.expr(e.input, scope, f"{path}.input"))


def nested(w: LineageWalker, e: Expression.Nested, scope: Scope, path: str) -> Sources:
    kind = e.WhichOneof("nested_type")
    if kind == "struct":
        parts = [(f, f"{path}.struct.fields[{i}]") for i, f in enumerate(e.struct.fields)]
    elif kind == "list":
        parts = [(v, f"{path}.list.values[{i}]") for i, v in enumerate(e.list.values)]
    elif kind == "map":
        parts = [
            (x, f"{path}.map.key_values[{i}].{side}")
            for i, kv in enumerate(e.map.key_values)
            for side, x in (("key", kv.key), ("value", kv.value))
        ]
    else:
        raise PlanInvalidError("nested expression with nothing set", path)
    return each(w, TRANSFORMATION, parts, scope)


def no_input(w: LineageWalker, e: object, scope: Scope, path: str) -> Sources:
    """Literals, dynamic parameters (bound at run time, not read from a dataset), enum arguments."""
    return NONE


def lambda_(w: LineageWalker, e: Expression.Lambda, scope: Scope, path: str) -> Sources:
    """A lambda's body may read the input record too; its parameters carry no input of their own."""
    return apply(TRANSFORMATION, w.expr(e.body, scope, f"{path}.body"))


def named_lambda_reference(w: LineageWalker, e: Expression.NamedLambdaReference, scope: Scope, path: str) -> Sources:
    """A named lambda (`Plan.named_lambdas`) as a function value: its body's lineage, as an inline lambda's."""
    return lambda_(w, named_lambda(w.plan, e.lambda_reference, path), scope, path)


def lambda_invocation(w: LineageWalker, e: Expression.LambdaInvocation, scope: Scope, path: str) -> Sources:
    """The body (inline or named) and the arguments bound to its parameters."""
    kind = e.WhichOneof("lambda_type")
    if kind == "lambda":
        body = lambda_(w, getattr(e, "lambda"), scope, f"{path}.lambda")
    elif kind == "named_lambda":
        p = f"{path}.named_lambda"
        body = lambda_(w, named_lambda(w.plan, e.named_lambda.lambda_reference, p), scope, p)
    else:
        raise PlanInvalidError("lambda invocation without a lambda", path)
    args = [(a, f"{path}.arguments.fields[{i}]") for i, a in enumerate(e.arguments.fields)]
    return merge(body, each(w, TRANSFORMATION, args, scope))


# --- subqueries --------------------------------------------------------------------------------------------


def subquery(w: LineageWalker, sq: Subquery, scope: Scope, path: str) -> Sources:
    kind, rel, body_path = subquery_body(sq, path)
    part = getattr(sq, kind)
    p = f"{path}.{kind}"
    if w.quirks.unmarked_outer_references:  # ibis: refused as the consumer refuses it (see subqueries.py)
        from ...translation.subqueries import refuse_unmarked_correlation

        refuse_unmarked_correlation(w, rel, body_path)
    body = w.rel(rel, body_path, outer=scope)
    rows = body.indirect  # what decides the body's rows: its filters, joins, grouping, outer references
    values = merge(*(apply(TRANSFORMATION, c.sources) for c in body.columns))
    if kind == "scalar":
        if not body.columns:
            raise PlanInvalidError("scalar subquery with no column", body_path)
        return merge(body.columns[0].sources, rows)
    if kind == "in_predicate":
        needles = [(n, f"{p}.needles[{i}]") for i, n in enumerate(part.needles)]
        return merge(each(w, TRANSFORMATION, needles, scope), values, rows)
    if kind == "set_comparison":
        left = apply(TRANSFORMATION, w.expr(part.left, scope, f"{p}.left"))
        return merge(left, values, rows)
    # set_predicate: EXISTS depends on whether rows exist; UNIQUE also on their values.
    if part.predicate_op == Subquery.SetPredicate.PREDICATE_OP_UNIQUE:
        return merge(values, rows)
    return merge(rows)


EXPRESSIONS: dict[str, ExprHandler] = {
    "literal": no_input,
    "selection": selection,
    "scalar_function": scalar_function,
    "window_function": window_function,
    "if_then": if_then,
    "switch_expression": switch_expression,
    "singular_or_list": singular_or_list,
    "multi_or_list": multi_or_list,
    "cast": cast,
    "subquery": subquery,
    "nested": nested,
    "dynamic_parameter": no_input,
    "execution_context_variable": no_input,
    "lambda": lambda_,
    "lambda_invocation": lambda_invocation,
    "named_lambda_reference": named_lambda_reference,
}


# --- result types (only what lays out nested output names needs) -------------------------------------------


def type_of(e: Expression, scope: Scope) -> tp.Type | None:
    """The Substrait type of an expression's value where the plan states it; None when it does not."""
    kind = e.WhichOneof("rex_type")
    if kind == "selection":
        ref = e.selection
        root = ref.WhichOneof("root_type")
        target = scope.up(ref.outer_reference.steps_out) if root == "outer_reference" else scope
        if root == "expression" or root == "lambda_parameter_reference" or target is None:
            return None
        seg = ref.direct_reference
        if seg.WhichOneof("reference_type") != "struct_field" or seg.struct_field.HasField("child"):
            return None
        i = seg.struct_field.field
        return target.columns[i].type if 0 <= i < len(target.columns) else None
    if kind in ("scalar_function", "window_function"):
        fn = getattr(e, kind)
        return fn.output_type if fn.HasField("output_type") else None
    if kind == "cast":
        return e.cast.type
    if kind == "if_then":
        then = next((c.then for c in e.if_then.ifs if c.HasField("then")), None)  # (not a CASE operand's clause)
        return type_of(then, scope) if then is not None else None
    return None
