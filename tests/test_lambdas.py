"""Lambdas (`Expression.lambda`, `lambda_invocation`, named lambdas) and the list functions that take them.

Hand-built plans over a table of arrays, each checked against the same query written in Spark SQL with
Spark's own lambda syntax (`transform(xs, x -> x + 1)`): a user relies on a Substrait lambda meaning exactly
what the SQL lambda means, run as a native Catalyst lambda function.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from plan_builder import (
    Expr,
    PlanBuilder,
    Type,
    assert_same_rows,
    boolean,
    field,
    i32,
    i64,
    list_,
    lit,
    named,
    project,
    run,
    seg_field,
)
from substrait import plan_pb2
from substrait_spark.consumer.errors import PlanInvalidError

pytestmark = [pytest.mark.spark]

ROWS = [
    (1, [1, 2, 3], [[1, 2], [3]]),
    (2, [5, None, 0], [[], [4, None]]),
    (3, [], []),
    (4, None, None),
]
COLUMNS = ["k", "xs", "xss"]
TYPES = [i32(), list_(i32()), list_(list_(i32()))]


@pytest.fixture(scope="module")
def arrays(spark):
    spark.createDataFrame(ROWS, "k int, xs array<int>, xss array<array<int>>").createOrReplaceTempView("lambda_arrays")
    return named("lambda_arrays", COLUMNS, TYPES)


def param(i: int, steps_out: int = 0) -> Expr:
    """A reference to parameter `i` of the lambda `steps_out` lambdas out."""
    ref = Expr.FieldReference(direct_reference=seg_field(i))
    ref.lambda_parameter_reference.steps_out = steps_out
    return Expr(selection=ref)


def lambda_(body: Expr, *types: Type) -> Expr:
    lam = Expr.Lambda(body=body)
    lam.parameters.types.extend(types)
    lam.parameters.nullability = Type.NULLABILITY_REQUIRED
    return Expr(**{"lambda": lam})


def select(spark, b: PlanBuilder, source, *exprs: Expr, names=None, plan_hook=None):
    names = names or [f"c{i}" for i in range(len(exprs))]
    rel = project(source, *exprs, emit=[0, *range(len(COLUMNS), len(COLUMNS) + len(exprs))])
    plan = b.plan(rel, ["k", *names])
    if plan_hook:
        plan_hook(plan)
    return run(plan, spark)


def sql(spark, *exprs: str):
    cols = ", ".join(f"{e} AS c{i}" for i, e in enumerate(exprs))
    return spark.sql(f"SELECT k, {cols} FROM lambda_arrays")


def _plan_text(df) -> str:
    return df._jdf.queryExecution().optimizedPlan().toString()


def test_transform_filter_and_matches_are_spark_lambdas(spark, arrays):
    b = PlanBuilder()
    x = param(0)
    plus_one = lambda_(b.call("add", x, lit(1, i32()), out=i32()), i32())
    positive = lambda_(b.call("gt", x, lit(0, i32()), out=boolean()), i32())
    got = select(
        spark,
        b,
        arrays,
        b.call("transform", field(1), plus_one, out=list_(i32())),
        b.call("filter", field(1), positive, out=list_(i32())),
        b.call("any_match", field(1), positive, out=boolean()),
        b.call("all_match", field(1), positive, out=boolean()),
    )
    want = sql(
        spark, "transform(xs, x -> x + 1)", "filter(xs, x -> x > 0)", "exists(xs, x -> x > 0)", "forall(xs, x -> x > 0)"
    )
    assert_same_rows(got, want)
    text = _plan_text(got)
    assert "lambdafunction" in text and "PythonUDF" not in text and "BatchEvalPython" not in text


def test_any_and_all_match_are_three_valued(spark, arrays):
    """[5, NULL, 0]: gt(x, 1) is true, NULL, false; lt(x, 10) is true, NULL, true."""
    b = PlanBuilder()
    gt1 = lambda_(b.call("gt", param(0), lit(1, i32()), out=boolean()), i32())
    lt10 = lambda_(b.call("lt", param(0), lit(10, i32()), out=boolean()), i32())
    got = select(
        spark,
        b,
        arrays,
        b.call("any_match", field(1), lt10, out=boolean()),
        b.call("all_match", field(1), lt10, out=boolean()),
        b.call("all_match", field(1), gt1, out=boolean()),
    )
    rows = {r.k: (r.c0, r.c1, r.c2) for r in got.collect()}
    assert rows == {1: (True, True, False), 2: (True, None, False), 3: (False, True, True), 4: (None, None, None)}


def test_lambda_body_sees_the_row_columns(spark, arrays):
    """A lambda closes over the input record: x * k uses each row's k."""
    b = PlanBuilder()
    times_k = lambda_(b.call("multiply", param(0), field(0), out=i32()), i32())
    got = select(spark, b, arrays, b.call("transform", field(1), times_k, out=list_(i32())))
    assert_same_rows(got, sql(spark, "transform(xs, x -> x * k)"))


def test_nested_lambdas_reach_outer_parameters(spark, arrays):
    """transform(xss, ys -> transform(ys, y -> y + cardinality(ys))): steps_out=1 is the enclosing lambda."""
    b = PlanBuilder()
    size_of_ys = b.call("cardinality", param(0, steps_out=1), out=i64())
    inner = lambda_(b.call("add", param(0), size_of_ys, out=i64()), i32())
    outer = lambda_(b.call("transform", param(0), inner, out=list_(i64())), list_(i32()))
    got = select(spark, b, arrays, b.call("transform", field(2), outer, out=list_(list_(i64()))))
    assert_same_rows(got, sql(spark, "transform(xss, ys -> transform(ys, y -> y + size(ys)))"))


def test_sort_directions(spark, arrays):
    b = PlanBuilder()
    directions = ["ASC_NULLS_FIRST", "ASC_NULLS_LAST", "DESC_NULLS_FIRST", "DESC_NULLS_LAST"]
    exprs = [b.call("sort", field(1), out=list_(i32()), options={"direction": [d]}) for d in directions]
    got = select(spark, b, arrays, *exprs)
    rows = {r.k: tuple(r)[1:] for r in got.collect()}
    assert rows[2] == ([None, 0, 5], [0, 5, None], [None, 5, 0], [5, 0, None])
    assert rows[1] == ([1, 2, 3], [1, 2, 3], [3, 2, 1], [3, 2, 1])
    assert rows[4] == (None, None, None, None)


def test_cardinality_counts_nulls_and_is_null_for_null(spark, arrays):
    b = PlanBuilder()
    got = select(spark, b, arrays, b.call("cardinality", field(1), out=i64()))
    assert {r.k: r.c0 for r in got.collect()} == {1: 3, 2: 3, 3: 0, 4: None}


def _invocation(body: Expr, types: list[Type], args: list[Expr], named_anchor: int | None = None) -> Expr:
    inv = Expr.LambdaInvocation()
    if named_anchor is None:
        lam = getattr(inv, "lambda")
        lam.body.CopyFrom(body)
        lam.parameters.types.extend(types)
    else:
        inv.named_lambda.lambda_reference = named_anchor
    inv.arguments.fields.extend(args)
    return Expr(lambda_invocation=inv)


def test_lambda_invocation_binds_arguments(spark, arrays):
    """((a, b) -> a * 10 + b)(k, 7) is k * 10 + 7."""
    b = PlanBuilder()
    body = b.call("add", b.call("multiply", param(0), lit(10, i32()), out=i32()), param(1), out=i32())
    got = select(spark, b, arrays, _invocation(body, [i32(), i32()], [field(0), lit(7, i32())]))
    assert_same_rows(got, sql(spark, "k * 10 + 7"))


def named_double(b: PlanBuilder) -> tuple[list[Expr], Callable[[plan_pb2.Plan], None]]:
    """The named lambda 5, `double` = (x) -> x * 2, invoked on k and passed to transform over xs: the two
    expressions, and the hook that declares the lambda in the plan (also test_lineage's)."""
    body = b.call("multiply", param(0), lit(2, i32()), out=i32())

    def add_named(plan: plan_pb2.Plan) -> None:
        nl = plan.named_lambdas.add(lambda_anchor=5, name="double")
        lam = getattr(nl, "lambda")
        lam.body.CopyFrom(body)
        lam.parameters.types.append(i32())

    ref = Expr(named_lambda_reference=Expr.NamedLambdaReference(lambda_reference=5))
    exprs = [_invocation(Expr(), [], [field(0)], named_anchor=5), b.call("transform", field(1), ref, out=list_(i32()))]
    return exprs, add_named


def test_named_lambda_invoked_and_passed_to_a_higher_order_function(spark, arrays):
    b = PlanBuilder()
    exprs, add_named = named_double(b)
    got = select(spark, b, arrays, *exprs, plan_hook=add_named)
    assert_same_rows(got, sql(spark, "k * 2", "transform(xs, x -> x * 2)"))


def test_parameter_reference_outside_any_lambda_is_invalid(spark, arrays):
    b = PlanBuilder()
    with pytest.raises(PlanInvalidError, match="steps_out=0 with 0 enclosing lambda"):
        select(spark, b, arrays, b.call("add", param(0), lit(1, i32()), out=i32()))


def test_lambda_of_wrong_arity_for_the_function_is_invalid(spark, arrays):
    b = PlanBuilder()
    two = lambda_(b.call("add", param(0), param(1), out=i32()), i32(), i32())
    with pytest.raises(PlanInvalidError, match="lambda of 2 parameter"):
        select(spark, b, arrays, b.call("transform", field(1), two, out=list_(i32())))


def test_invocation_with_wrong_argument_count_is_invalid(spark, arrays):
    b = PlanBuilder()
    body = b.call("add", param(0), lit(1, i32()), out=i32())
    with pytest.raises(PlanInvalidError, match="invoked with 2 argument"):
        select(spark, b, arrays, _invocation(body, [i32()], [field(0), field(0)]))


def test_undefined_named_lambda_is_invalid(spark, arrays):
    b = PlanBuilder()
    with pytest.raises(PlanInvalidError, match="named lambda 9 is not defined"):
        select(spark, b, arrays, _invocation(Expr(), [], [field(0)], named_anchor=9))
