"""Literals whose Spark type comes from their place or their value (issue 31, TPC-DS):

- an `interval_compound` literal with no months is a day-time interval, one with no days/seconds a year-month
  interval (DataFusion 55 writes `d + 5` and `d + INTERVAL '5' DAY` so); only one with both stays refused;
- an untyped `Literal.null` (DuckDB 1.1.3's substrait extension: under a Cast in `CASE ... ELSE NULL`, as a UNION
  ALL column) takes the type its place fixes, at load; where nothing fixes one it stays refused (exit 2).

validate (no Spark) and run must say the same thing; the Spark tests compare with DuckDB's answer over the shop.
"""

from __future__ import annotations

import datetime as dt

import plan_builder as pb
import pytest
from oracles import assert_same_result
from pyspark.sql import types as T
from substrait import algebra_pb2 as alg
from substrait import type_pb2 as tp
from substrait_spark.consumer import load_plan
from substrait_spark.consumer.analysis.analyze import Finding, validate_plan
from substrait_spark.consumer.errors import PlanInvalidError, UnsupportedFeatureError
from substrait_spark.consumer.translation.literals import python_value

Expr = alg.Expression
SetRel = alg.SetRel
ROOT = "relations[0].root.input"
DAY_TIME = T.DayTimeIntervalType()


def _compound(months: int = 0, days: int = 0, seconds: int = 0, subseconds: int = 0, precision: int = 9) -> Expr:
    lit = Expr.Literal()
    c = lit.interval_compound
    c.interval_year_to_month.months = months
    ds = c.interval_day_to_second
    ds.days, ds.seconds, ds.subseconds, ds.precision = days, seconds, subseconds, precision
    return Expr(literal=lit)


def _untyped_null() -> Expr:
    lit = Expr.Literal()
    lit.null.SetInParent()  # a Type with no kind: what DuckDB 1.1.3 writes
    return Expr(literal=lit)


def _loaded(plan):
    return load_plan(plan.SerializeToString())


def _null_types(loaded) -> list[tp.Type]:
    from substrait_spark.consumer.walk import nodes

    return [m.null for m, _ in nodes(loaded.plan) if isinstance(m, Expr.Literal) and m.HasField("null")]


# --- interval_compound -----------------------------------------------------------------------------------------


@pytest.mark.unit
@pytest.mark.parametrize(
    ("literal", "value", "spark_type"),
    [
        (_compound(seconds=432_000), dt.timedelta(days=5), T.DayTimeIntervalType()),  # DataFusion's `d + 5`
        (_compound(days=3), dt.timedelta(days=3), DAY_TIME),
        (_compound(seconds=5400, subseconds=250_000_000), dt.timedelta(seconds=5400.25), DAY_TIME),
        (
            _compound(seconds=1, subseconds=7, precision=6),
            dt.timedelta(seconds=1, microseconds=7),
            T.DayTimeIntervalType(),
        ),
        (_compound(months=14), 14, T.YearMonthIntervalType()),
        (_compound(), dt.timedelta(0), DAY_TIME),
    ],
    ids=["seconds_ns", "days", "subseconds_ns", "subseconds_us", "months", "zero"],
)
def test_compound_interval_with_one_part_is_that_interval(literal, value, spark_type):
    assert python_value(literal.literal) == (value, spark_type)


@pytest.mark.unit
@pytest.mark.parametrize(
    ("literal", "words", "at"),
    [
        (_compound(months=1, days=2), "year-to-second interval", ".literal"),
        (_compound(seconds=1, subseconds=1_000_000_001), "below a microsecond", ".interval_day_to_second"),
    ],
    ids=["months_and_days", "nanoseconds"],
)
def test_compound_interval_spark_cannot_hold_is_refused_alike_by_validate_and_translation(literal, words, at):
    plan = pb.PlanBuilder().plan(pb.project(pb.virtual(["d"], [pb.i32()], [[0]]), literal, emit=[1]), ["c"])
    path = f"{ROOT}.project.expressions[0].literal"
    with pytest.raises(UnsupportedFeatureError, match=words) as err:
        python_value(literal.literal, path)
    assert err.value.path.startswith(path) and err.value.path.endswith(at) and err.value.exit_code == 3
    assert validate_plan(_loaded(plan)) == [Finding(err.value.message, err.value.path)]


@pytest.mark.unit
def test_day_interval_literal_below_a_microsecond_is_refused_not_truncated():
    lit = Expr.Literal()
    lit.interval_day_to_second.seconds, lit.interval_day_to_second.subseconds = 1, 123_456_789
    lit.interval_day_to_second.precision = 9
    with pytest.raises(UnsupportedFeatureError, match="below a microsecond"):
        python_value(lit, "x")
    lit.interval_day_to_second.subseconds = 123_456_000
    assert python_value(lit, "x") == (dt.timedelta(seconds=1.123456), T.DayTimeIntervalType())


@pytest.mark.unit
def test_date_plus_compound_day_interval_validates_as_a_date():
    builder = pb.PlanBuilder()
    shifted = builder.call("add", pb.field(0), _compound(seconds=432_000), out=pb.date())
    plan = builder.plan(pb.project(pb.virtual(["d"], [pb.date()], [[dt.date(2025, 1, 31)]]), shifted, emit=[1]), ["e"])
    assert validate_plan(_loaded(plan)) == []


# --- untyped nulls: typed at load from their place ------------------------------------------------------------


def _plan(rel, names):
    return pb.PlanBuilder().plan(rel, names)


def _two_columns() -> alg.Rel:
    return pb.virtual(["n", "s"], [pb.i32(), pb.string()], [[1, "a"], [2, "b"]])


@pytest.mark.unit
def test_untyped_null_under_a_cast_takes_the_cast_type():
    cast = pb.cast(_untyped_null(), pb.decimal_(7, 2))
    loaded = _loaded(_plan(pb.project(_two_columns(), pb.if_then([(pb.lit(True), cast)], cast), emit=[2]), ["c"]))
    assert [t.WhichOneof("kind") for t in _null_types(loaded)] == ["decimal", "decimal"]
    assert (_null_types(loaded)[0].decimal.precision, _null_types(loaded)[0].decimal.scale) == (7, 2)
    assert any("typed from a Cast's target" in n for n in loaded.notes)
    assert validate_plan(loaded) == []


@pytest.mark.unit
@pytest.mark.parametrize("shape", ["if_then", "switch"])
def test_untyped_null_branch_takes_another_branch_type(shape):
    if shape == "if_then":
        case = pb.if_then([(pb.lit(True), _untyped_null())], pb.field(1))
    else:
        case = pb.switch(pb.field(0), [(1, pb.field(1)), (2, _untyped_null())], _untyped_null(), type_=pb.i32())
    loaded = _loaded(_plan(pb.project(_two_columns(), case, emit=[2]), ["c"]))
    assert {t.WhichOneof("kind") for t in _null_types(loaded)} == {"string"}
    assert validate_plan(loaded) == []


def _union(*inputs: alg.Rel) -> alg.Rel:
    return pb.set_(SetRel.SET_OP_UNION_ALL, *inputs)


@pytest.mark.unit
def test_untyped_null_set_column_takes_the_other_inputs_type():
    typed = pb.project(_two_columns(), pb.field(0), pb.field(1), emit=[2, 3])
    nulls = pb.project(_two_columns(), pb.field(0), _untyped_null(), emit=[2, 3])
    loaded = _loaded(_plan(_union(nulls, _union(typed, nulls)), ["n", "s"]))
    assert [t.WhichOneof("kind") for t in _null_types(loaded)] == ["string", "string"]
    assert validate_plan(loaded) == []


@pytest.mark.unit
def test_duckdb_project_layout_is_followed_when_typing_a_set_column():
    """DuckDB <= 1.1 plans: a project outputs its expressions only (Quirks), a read its projection."""
    read = pb.named("t", ["a", "b", "s"], [pb.i32(), pb.i64(), pb.string()])
    read.read.projection.select.struct_items.add(field=0)
    read.read.projection.select.struct_items.add(field=2)
    typed = pb.project(read, pb.field(0), pb.field(1))
    nulls = pb.project(read, pb.field(0), _untyped_null())
    plan = _plan(_union(typed, nulls), ["a", "s"])
    plan.version.producer, plan.version.minor_number = "DuckDB", 53
    assert [t.WhichOneof("kind") for t in _null_types(_loaded(plan))] == ["string"]


UNFIXED = {
    "bare_in_project": (pb.project(_two_columns(), _untyped_null(), emit=[2]), ".project.expressions[0].literal.null"),
    "every_set_input": (
        _union(*[pb.project(_two_columns(), _untyped_null(), emit=[2])] * 2),
        ".set.inputs[0].project.expressions[0].literal.null",
    ),
    "only_null_branches": (
        pb.project(_two_columns(), pb.if_then([(pb.lit(True), _untyped_null())], _untyped_null()), emit=[2]),
        ".project.expressions[0].if_then.ifs[0].then.literal.null",
    ),
}


@pytest.mark.unit
@pytest.mark.parametrize("name", sorted(UNFIXED))
def test_untyped_null_nothing_types_stays_refused_with_its_path(name):
    rel, at = UNFIXED[name]
    with pytest.raises(PlanInvalidError, match="type has no kind set") as err:
        validate_plan(_loaded(_plan(rel, ["c"])))
    assert err.value.path == ROOT + at and err.value.exit_code == 2


# --- on Spark, against DuckDB over the shop ----------------------------------------------------------------------

INTERVAL_SQL = """
    SELECT order_id, order_date + 5 AS due, order_date - INTERVAL '3 days' AS before,
           order_date + INTERVAL '1' MONTH AS next_month, ordered_at + INTERVAL '90 minutes' AS later
    FROM orders WHERE order_date + 5 > DATE '2025-12-01'"""
# DuckDB's date + interval is a timestamp; the plan (as Spark SQL) keeps a date.
INTERVAL_ORACLE = """
    SELECT order_id, order_date + 5, CAST(order_date - INTERVAL 3 DAY AS DATE),
           CAST(order_date + INTERVAL 1 MONTH AS DATE), ordered_at + INTERVAL 90 MINUTE
    FROM orders WHERE order_date + 5 > DATE '2025-12-01'"""


@pytest.mark.spark
def test_datafusion_day_and_month_intervals_run_as_duckdb_answers(shop_dir, spark, shop_oracle):
    from datafusion.substrait import Serde
    from producers.shop_plans import _context
    from substrait_spark.consumer import TableMapResolver, to_dataframe

    ctx = _context(shop_dir)
    loaded = load_plan(Serde.serialize_bytes(INTERVAL_SQL, ctx))
    assert "interval_compound" in str(loaded.plan), "DataFusion no longer writes compound intervals"
    resolver = TableMapResolver.from_tables_dir(str(shop_dir))
    df = to_dataframe(loaded, spark, resolver)
    assert [f.dataType for f in df.schema.fields][1:4] == [T.DateType()] * 3
    rows = [tuple(r) for r in df.collect()]
    assert rows, "the filter keeps no row: the test tests nothing"
    assert_same_result(rows, shop_oracle.run(INTERVAL_ORACLE).rows, context=INTERVAL_SQL)

    both = load_plan(Serde.serialize_bytes("SELECT order_date + INTERVAL '1 month 2 days' FROM orders", ctx))
    with pytest.raises(UnsupportedFeatureError, match="year-to-second interval") as err:
        to_dataframe(both, spark, resolver)
    assert validate_plan(both) == [Finding(err.value.message, err.value.path)]


ITEMS = ["order_id", "product_id", "quantity", "unit_price", "discount"]
ITEM_TYPES = [pb.i64(False), pb.i64(), pb.i32(), pb.decimal_(10, 2), pb.decimal_(4, 2)]
PRODUCTS = ["product_id", "name", "category", "price"]
PRODUCT_TYPES = [pb.i64(False), pb.string(), pb.string(), pb.decimal_(10, 2)]

UNTYPED_NULL_SQL = {
    "case_else_null": "SELECT order_id, SUM(CASE WHEN quantity > 2 THEN unit_price ELSE NULL END) FROM order_items "
    "GROUP BY order_id",
    "union_all_null_column": "SELECT product_id, category FROM products "
    "UNION ALL SELECT product_id, NULL FROM products",
}


def _duckdb_shaped(name: str):
    """The plans DuckDB 1.1.3 writes for UNTYPED_NULL_SQL (an untyped null under a Cast / as a set column)."""
    builder = pb.PlanBuilder()
    if name == "case_else_null":
        big = builder.call("gt", pb.field(2), pb.lit(2, pb.i32()), out=pb.boolean())
        case = pb.if_then([(big, pb.field(3))], pb.cast(_untyped_null(), pb.decimal_(10, 2)))
        total = builder.agg("sum", case, out=pb.decimal_(38, 2))
        rel = pb.aggregate(pb.named("order_items", ITEMS, ITEM_TYPES), [pb.field(0)], measures=[total])
        return builder.plan(rel, ["order_id", "total"])
    products = pb.named("products", PRODUCTS, PRODUCT_TYPES)
    typed = pb.project(products, pb.field(0), pb.field(2), emit=[4, 5])
    nulls = pb.project(products, pb.field(0), _untyped_null(), emit=[4, 5])
    return builder.plan(_union(typed, nulls), ["product_id", "category"])


@pytest.mark.spark
@pytest.mark.parametrize("name", sorted(UNTYPED_NULL_SQL))
def test_duckdb_untyped_nulls_run_as_duckdb_answers(name, shop_dir, spark, shop_oracle):
    from substrait_spark.consumer import TableMapResolver, to_dataframe

    loaded = _loaded(_duckdb_shaped(name))
    assert validate_plan(loaded) == []
    df = to_dataframe(loaded, spark, TableMapResolver.from_tables_dir(str(shop_dir)))
    expected = shop_oracle.run(UNTYPED_NULL_SQL[name])
    assert_same_result([tuple(r) for r in df.collect()], expected.rows, context=UNTYPED_NULL_SQL[name])


@pytest.mark.spark
def test_untyped_null_nothing_types_is_refused_by_run_as_by_validate(spark):
    rel, at = UNFIXED["bare_in_project"]
    with pytest.raises(PlanInvalidError, match="type has no kind set") as err:
        pb.run(_loaded(_plan(rel, ["c"])), spark)
    assert err.value.path == ROOT + at


@pytest.mark.unit
def test_an_interval_literal_beyond_any_range_is_an_invalid_plan_not_a_crash():
    """Found by the fuzzer (seed 18, case 46: a type swap left 2**31-1 days): validate and run read the value, and a
    timedelta that cannot hold it is the plan's error (exit 2) at the literal, not an internal error."""
    from substrait_spark.consumer.errors import PlanInvalidError
    from substrait_spark.consumer.translation.literals import python_value

    lit = alg.Expression.Literal(
        interval_day_to_second=alg.Expression.Literal.IntervalDayToSecond(days=2**31 - 1, seconds=86400, precision=6)
    )
    with pytest.raises(PlanInvalidError, match="interval literal out of range") as raised:
        python_value(lit, "at.the.literal")
    assert raised.value.exit_code == 2 and "at.the.literal" in str(raised.value)
