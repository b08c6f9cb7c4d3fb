"""Lambdas: `Expression.lambda`, `Expression.lambda_invocation`, named lambdas and lambda parameter references.

A lambda becomes a function *value* (`FunctionValue`): a Python callable from Spark lambda-variable columns to
the translated body. Higher-order functions (functions/lists.py) hand it to Spark's own higher-order functions
(`F.transform`, `F.filter`, `F.exists`, `F.forall`, `F.array_sort`, ...), which call it once with
`UnresolvedNamedLambdaVariable` columns: the body is a native Catalyst `LambdaFunction`, never a Python UDF.

An invocation `((x) -> body)(args)` binds the parameters to the argument expressions and translates the body
in place: the result is an ordinary expression Catalyst can fold and push down.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T
from substrait import algebra_pb2 as alg
from substrait import type_pb2 as tp

from .. import walk
from ..errors import PlanInvalidError
from ..types import spark_type
from .scope import Scope, Typed

if TYPE_CHECKING:
    from .consumer import SubstraitConsumer

Expression = alg.Expression


@dataclass
class FunctionValue:
    """A translated lambda: `build(params)` translates the body with the parameters bound.

    `body_type` is the Spark type of the body, known once the body has been translated (Spark calls the
    callable while building the higher-order function, so it is set by the time the handler returns).
    """

    param_types: tuple[T.DataType, ...]
    build: Callable[[Sequence[Typed]], Typed]
    path: str
    body_type: T.DataType | None = field(default=None)

    def _body(self, *cols: Column) -> Column:
        out = self.build([Typed(c, t) for c, t in zip(cols, self.param_types, strict=True)])
        self.body_type = out.type
        return out.col

    def spark(self, arity: int) -> Callable[..., Column]:
        """The callable Spark's higher-order functions take: PySpark reads the number of lambda variables from
        its signature (one to three), so it has exactly `arity` positional parameters."""
        if len(self.param_types) != arity:
            raise PlanInvalidError(
                f"lambda of {len(self.param_types)} parameter(s) where the function calls it with {arity}", self.path
            )
        body = self._body
        shapes: dict[int, Callable[..., Column]] = {
            1: lambda x: body(x),
            2: lambda x, y: body(x, y),
            3: lambda x, y, z: body(x, y, z),
        }
        if arity not in shapes:
            raise PlanInvalidError(f"lambda of {arity} parameters: Spark's lambdas take one to three", self.path)
        return shapes[arity]


def function_value(fn: FunctionValue) -> Typed:
    """A function value as an argument (its column is a typed NULL placeholder: only higher-order functions
    read `value`)."""
    return Typed(F.lit(None), T.NullType(), fn)


def null_function(path: str) -> Typed:
    """A NULL literal of a function type (`null::func?<i32 -> bool>`): higher-order functions return NULL."""
    return Typed(F.lit(None), T.NullType(), None, True)


def is_null_function_literal(lit: Expression.Literal) -> bool:
    return lit.WhichOneof("literal_type") == "null" and lit.null.WhichOneof("kind") == "func"


def _param_types(params: tp.Type.Struct, path: str) -> tuple[T.DataType, ...]:
    return tuple(spark_type(t, f"{path}.types[{i}]") for i, t in enumerate(params.types))


def _with_parameters(scope: Scope, params: Sequence[Typed]) -> Scope:
    """The scope of a lambda body: the enclosing scope plus one more (innermost) frame of parameters."""
    return replace(scope, lambdas=(*scope.lambdas, tuple(params)))


def lambda_value(cx: SubstraitConsumer, e: Expression.Lambda, scope: Scope, path: str) -> Typed:
    """`Expression.lambda`: a function value closing over the enclosing scope (columns and outer lambdas)."""
    if not e.HasField("body"):
        raise PlanInvalidError("lambda without a body", path)
    types = _param_types(e.parameters, f"{path}.parameters")

    def build(params: Sequence[Typed]) -> Typed:
        return cx.expression(e.body, _with_parameters(scope, params), f"{path}.body")

    return function_value(FunctionValue(types, build, path))


def named_lambda(cx: SubstraitConsumer, anchor: int, path: str) -> Expression.Lambda:
    """The definition of `Plan.named_lambdas[*]` with this anchor."""
    return walk.named_lambda(cx.plan, anchor, path)


def _named_scope(scope: Scope) -> Scope:
    """A named lambda does not capture the caller's scope: no enclosing lambda parameters."""
    return replace(scope, lambdas=())


def named_lambda_reference(cx: SubstraitConsumer, e: Expression.NamedLambdaReference, scope: Scope, path: str) -> Typed:
    return lambda_value(cx, named_lambda(cx, e.lambda_reference, path), _named_scope(scope), path)


def invocation(cx: SubstraitConsumer, e: Expression.LambdaInvocation, scope: Scope, path: str) -> Typed:
    """`((x) -> body)(args)`: the body translated with the parameters bound to the argument expressions."""
    kind = e.WhichOneof("lambda_type")
    if kind == "lambda":
        lam, body_scope, lam_path = getattr(e, "lambda"), scope, f"{path}.lambda"
    elif kind == "named_lambda":
        lam_path = f"{path}.named_lambda"
        lam, body_scope = named_lambda(cx, e.named_lambda.lambda_reference, lam_path), _named_scope(scope)
    else:
        raise PlanInvalidError("lambda invocation without a lambda", path)
    types = _param_types(lam.parameters, f"{lam_path}.parameters")
    fields = e.arguments.fields
    if len(fields) != len(types):
        raise PlanInvalidError(
            f"lambda of {len(types)} parameter(s) invoked with {len(fields)} argument(s)", f"{path}.arguments"
        )
    args = [cx.expression(a, scope, f"{path}.arguments.fields[{i}]") for i, a in enumerate(fields)]
    # Arguments take the declared parameter type (a literal 5 for an i64 parameter is still an i64 inside).
    bound = [a if a.type == t else Typed(a.col.cast(t), t) for a, t in zip(args, types, strict=True)]
    return cx.expression(lam.body, _with_parameters(body_scope, bound), f"{lam_path}.body")


def parameter(ref: Expression.FieldReference, scope: Scope, path: str) -> Typed:
    """A field reference rooted at a lambda's parameters (`steps_out` lambdas up, innermost is 0).

    The parameters form a struct: the first segment picks the parameter, further segments go inside it.
    """
    from .expressions import _segment

    steps = ref.lambda_parameter_reference.steps_out
    if not 0 <= steps < len(scope.lambdas):
        raise PlanInvalidError(
            f"lambda parameter reference steps_out={steps} with {len(scope.lambdas)} enclosing lambda(s)", path
        )
    params = scope.lambdas[-1 - steps]
    if ref.WhichOneof("reference_type") != "direct_reference":
        raise PlanInvalidError("lambda parameter reference without a direct reference segment", path)
    seg = ref.direct_reference
    if seg.WhichOneof("reference_type") != "struct_field":
        raise PlanInvalidError("a lambda parameter reference must start with a struct field", path)
    i = seg.struct_field.field
    if not 0 <= i < len(params):
        raise PlanInvalidError(f"lambda parameter {i} out of range: the lambda has {len(params)}", path)
    if not seg.struct_field.HasField("child"):
        return params[i]
    return _segment(params[i], seg.struct_field.child, f"{path}.direct_reference")
