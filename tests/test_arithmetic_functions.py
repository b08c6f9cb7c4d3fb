"""Arithmetic, logarithmic and decimal functions with hand-built plans.

What a user relies on: the plan's options mean what the extension says even where Spark's defaults differ
(integer overflow ERROR fails the run, SATURATE clamps; division by zero; log of zero), the declared result
types hold (fp32 stays fp32, decimal sums are decimal(38, s)), and results agree with Spark SQL where both
define them.
"""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from plan_builder import (
    PlanBuilder,
    aggregate,
    decimal_,
    field,
    fp32,
    fp64,
    i8,
    i32,
    i64,
    lit,
    project,
    run,
    virtual,
)

pytestmark = [pytest.mark.spark]

DECIMAL_URN = "extension:io.substrait:functions_arithmetic_decimal"
LOG_URN = "extension:io.substrait:functions_logarithmic"


def _row(spark, b: PlanBuilder, *exprs, urn: str | None = None):
    rel = project(virtual(["dummy"], [i32()], [(0,)]), *exprs, emit=list(range(1, len(exprs) + 1)))
    plan = b.plan(rel, [f"c{i}" for i in range(len(exprs))])
    if urn:
        for u in plan.extension_urns:
            u.urn = urn
    df = run(plan, spark)
    return tuple(df.collect()[0]), [f.dataType.simpleString() for f in df.schema.fields]


def _overflowing_add(b: PlanBuilder, mode: str, rows):
    rel = virtual(["a", "b"], [i32(), i32()], rows)
    expr = b.call("add", field(0), field(1), out=i32(), options={"overflow": [mode]})
    return b.plan(project(rel, expr, emit=[2]), ["s"])


def test_overflow_error_fails_at_run_time_not_at_translation(spark):
    b = PlanBuilder()
    ok = run(_overflowing_add(b, "ERROR", [(1, 2)]), spark)
    assert ok.collect()[0][0] == 3
    df = run(_overflowing_add(PlanBuilder(), "ERROR", [(1, 2), (2_000_000_000, 2_000_000_000)]), spark)
    with pytest.raises(Exception, match="add: integer overflow"):
        df.collect()


def test_overflow_saturate_clamps_and_silent_wraps_like_spark(spark):
    b = PlanBuilder()
    sat = {"overflow": ["SATURATE"]}
    got, types = _row(
        spark,
        b,
        b.call("multiply", lit(13, i8()), lit(10, i8()), out=i8(), options=sat),
        b.call("subtract", lit(-120, i8()), lit(10, i8()), out=i8(), options=sat),
        b.call("abs", lit(-128, i8()), out=i8(), options=sat),
        b.call("add", lit(2 * 10**9, i32()), lit(2 * 10**9, i32()), out=i32(), options={"overflow": ["SILENT"]}),
    )
    assert got == (127, -128, 127, spark.sql("SELECT 2000000000 + 2000000000").first()[0])
    assert types == ["tinyint", "tinyint", "tinyint", "int"]


def test_i64_arithmetic_on_small_literals_is_64_bit(spark):
    b = PlanBuilder()
    got, types = _row(spark, b, b.call("add", lit(2_000_000_000, i64()), lit(2_000_000_000, i64()), out=i64()))
    assert got == (4_000_000_000,) and types == ["bigint"]


_IEEE = {"on_division_by_zero": ["IEEE"]}


def test_division_by_zero_and_modulus_options(spark):
    b = PlanBuilder()
    got, _ = _row(
        spark,
        b,
        b.call("divide", lit(5, i32()), lit(0, i32()), out=i32()),
        b.call("divide", lit(1.0, fp64()), lit(0.0, fp64()), out=fp64(), options=_IEEE),
        b.call("divide", lit(-1.0, fp64()), lit(0.0, fp64()), out=fp64(), options=_IEEE),
        b.call("divide", lit(0.0, fp64()), lit(0.0, fp64()), out=fp64(), options=_IEEE),
        b.call("modulus", lit(8, i32()), lit(-3, i32()), out=i32(), options={"division_type": ["FLOOR"]}),
        b.call("modulus", lit(8, i32()), lit(-3, i32()), out=i32()),
    )
    assert got[0] is None
    assert got[1:3] == (math.inf, -math.inf) and math.isnan(got[3])
    assert got[4:] == (-1, 2)
    b = PlanBuilder()
    rel = project(
        virtual(["d"], [i32()], [(0,)]),
        b.call("divide", lit(5, i32()), field(0), out=i32(), options={"on_division_by_zero": ["ERROR"]}),
        emit=[1],
    )
    with pytest.raises(Exception, match="division by zero"):
        run(b.plan(rel, ["q"]), spark).collect()


def test_float_division_without_preferences_is_sparks_own_division(spark):
    """A plan stating no `on_division_by_zero`/`on_domain_error` (DataFusion's, for one) leaves them to the
    consumer: Spark's `/` as Spark SQL plans it — a zero divisor gives NULL, inf/inf NaN — with no CASE around it;
    any stated preference still gets its CASE."""
    b = PlanBuilder()
    rel = project(
        virtual(["x", "d"], [fp64(), fp64()], [(1.0, 0.0), (0.0, 0.0), (math.inf, math.inf), (3.0, 2.0)]),
        b.call("divide", field(0), field(1), out=fp64()),
        emit=[2],
    )
    df = run(b.plan(rel, ["q"]), spark)
    got = [r[0] for r in df.collect()]
    assert got[:2] == [None, None] and math.isnan(got[2]) and got[3] == 1.5
    assert "CASE WHEN" not in _analyzed(df)
    b = PlanBuilder()
    rel = project(
        virtual(["x", "d"], [fp64(), fp64()], [(1.0, 0.0)]),
        b.call("divide", field(0), field(1), out=fp64(), options={"on_domain_error": ["NULL"]}),
        emit=[2],
    )
    df = run(b.plan(rel, ["q"]), spark)
    assert "CASE WHEN" in _analyzed(df) and df.collect()[0][0] == math.inf  # IEEE for x/0: the default once stated


def _analyzed(df) -> str:
    return df._jdf.queryExecution().analyzed().toString()


def test_logarithm_of_zero_and_negative_numbers(spark):
    b = PlanBuilder()
    got, types = _row(
        spark,
        b,
        b.call("ln", lit(0.0, fp64()), out=fp64()),
        b.call("ln", lit(-1.0, fp64()), out=fp64()),
        b.call("ln", lit(-1.0, fp64()), out=fp64(), options={"on_domain_error": ["NULL"]}),
        b.call("log10", lit(1000.0, fp32()), out=fp32()),
        b.call("logb", lit(8.0, fp64()), lit(2.0, fp64()), out=fp64()),
        urn=LOG_URN,
    )
    assert got[0] == -math.inf and math.isnan(got[1]) and got[2] is None
    assert got[3] == pytest.approx(3.0) and got[4] == pytest.approx(3.0)  # logb(x, base): the YAML's order
    assert types[3] == "float"
    b = PlanBuilder()
    with pytest.raises(Exception, match="logarithm of zero"):
        _row(spark, b, b.call("ln", lit(0.0, fp64()), out=fp64(), options={"on_log_zero": ["ERROR"]}), urn=LOG_URN)


def test_decimal_sum_and_avg_are_decimal_38_s_and_agree_with_spark_sql(spark):
    values = ["2.50", "0.00", "5.00", "-2.50", "-7.25"]
    rel = virtual(["x"], [decimal_(3, 2)], [(Decimal(v),) for v in values])
    b = PlanBuilder()
    plan = b.plan(
        aggregate(
            rel,
            measures=[
                b.agg("sum", field(0), out=decimal_(38, 2)),
                b.agg("avg", field(0), out=decimal_(38, 2)),
            ],
        ),
        ["s", "a"],
    )
    for u in plan.extension_urns:
        u.urn = DECIMAL_URN
    df = run(plan, spark)
    assert [f.dataType.simpleString() for f in df.schema.fields] == ["decimal(38,2)", "decimal(38,2)"]
    rows = ", ".join(f"(CAST({v} AS DECIMAL(3,2)))" for v in values)
    want = spark.sql(f"SELECT sum(x), CAST(avg(x) AS DECIMAL(38,2)) FROM VALUES {rows} AS t(x)").first()
    assert tuple(df.first()) == tuple(want) == (Decimal("-2.25"), Decimal("-0.45"))


def test_decimal_sum_overflow_error(spark):
    big = Decimal("9" * 38)
    b = PlanBuilder()
    rel = virtual(["x"], [decimal_(38, 0)], [(big,), (big,)])
    plan = b.plan(
        aggregate(rel, measures=[b.agg("sum", field(0), out=decimal_(38, 0), options={"overflow": ["ERROR"]})]),
        ["s"],
    )
    for u in plan.extension_urns:
        u.urn = DECIMAL_URN
    with pytest.raises(Exception, match="decimal overflow"):
        run(plan, spark).collect()


def test_decimal_bitwise_operators_are_128_bit_twos_complement(spark):
    pairs = [(-(10**37) - 12345, 10**36 + 999), (-31766, 900), (10**38 - 1, -(10**38) + 1)]
    b = PlanBuilder()
    exprs = [
        b.call(op, lit(Decimal(x), decimal_(38, 0)), lit(Decimal(y), decimal_(38, 0)), out=decimal_(38, 0))
        for x, y in pairs
        for op in ("bitwise_and", "bitwise_xor")
    ]
    got, _ = _row(spark, b, *exprs, urn=DECIMAL_URN)
    want = tuple(Decimal(v) for x, y in pairs for v in (x & y, x ^ y))
    assert got == want


def test_std_dev_and_variance_follow_the_distribution_enum(spark):
    rel = virtual(["x"], [fp32()], [(1.0,), (2.0,), (3.0,), (4.0,), (5.0,)])
    b = PlanBuilder()
    plan = b.plan(
        aggregate(
            rel,
            measures=[
                b.agg("variance", "POPULATION", field(0), out=fp32()),
                b.agg("variance", "SAMPLE", field(0), out=fp32()),
                b.agg("std_dev", "POPULATION", field(0), out=fp32()),
            ],
        ),
        ["vp", "vs", "sp"],
    )
    df = run(plan, spark)
    assert [f.dataType.simpleString() for f in df.schema.fields] == ["float", "float", "float"]
    assert tuple(df.first()) == pytest.approx((2.0, 2.5, math.sqrt(2.0)))


def test_integer_divide_declared_fp64_stays_integer_division_in_the_declared_type(spark):
    """ibis writes divide:i32_i32 with an fp64 output: the function is integer division, the column is double."""
    b = PlanBuilder()
    as_double, as_int = (b.call("divide", lit(7), lit(2), out=t) for t in (fp64(), i32()))
    got, types = _row(spark, b, as_double, as_int)
    assert got == (3.0, 3)
    assert types == ["double", "int"]
