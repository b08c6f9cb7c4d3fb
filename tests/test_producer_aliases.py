"""Functions producers write under their own names (`consumer/loading/producers.FUNCTION_ALIASES`), DataFusion's
GROUPING() (`(grouping_id & mask) >> n` on an i8, over its grouping id) and simple CASE, DuckDB's optimizer-internal
`constant_or_null`, and `validate` applying the translator's checks (issue 31: TPC-DS q13, q15, q17, q39, q48, q70,
q86 were refused).

DataFusion's plans are written by the pinned DataFusion from SQL over the shop's files (`producers/shop_plans.py`);
DuckDB 1.1.3's by its substrait extension at the pinned release (`producers/duckdb_substrait_plans.py`) from SQL over
the same files. Each plan must give DuckDB's answer to its SQL; DataFusion's shifts of narrow integers, where DuckDB
answers differently, give DataFusion's own.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from plan_builder import PlanBuilder, boolean, field, filter_, i64, lit, named, string
from producers.check import assert_gives_duckdb_answer, run_generated
from producers.shop_plans import plans as shop_plans_of
from substrait.plan_pb2 import Plan

# Each test carries its tier: `unit` (pure Python) or `spark`.

# SQL over the shop tables, written by the pinned DataFusion (names prefixed: the plan cache is shared).
DATAFUSION_SQL = {
    "alias-stddev-variance": """
        SELECT product_id, stddev(quantity) AS s_samp, stddev_pop(quantity * unit_price) AS s_pop,
               var_samp(quantity) AS v_samp, var_pop(quantity * unit_price) AS v_pop
        FROM order_items GROUP BY product_id ORDER BY product_id""",
    "alias-grouping": """
        SELECT o.status, c.country, GROUPING(o.status) AS g_status, GROUPING(c.country) AS g_country, COUNT(*) AS n
        FROM orders o JOIN customers c ON c.customer_id = o.customer_id
        GROUP BY ROLLUP(o.status, c.country)
        ORDER BY o.status NULLS FIRST, c.country NULLS FIRST, g_status, g_country""",
    # DataFusion writes a simple CASE as an IfThen whose first clause is the operand (no `then`); NULL matches none.
    "alias-simple-case": """
        SELECT order_id, product_id, CASE discount WHEN 0.05 THEN 'five' WHEN 0.10 THEN 'ten' ELSE 'other' END AS band
        FROM order_items WHERE order_id < 1040 ORDER BY order_id, product_id, band""",
}
ORDERED = {"alias-stddev-variance": (0,), "alias-grouping": (0, 1, 2, 3), "alias-simple-case": (0, 1)}
# DataFusion shifts an i8/i16 by the amount modulo its width (Rust's wrapping_shr/shl: 125 >> 9 is 62, 125 << 2
# wraps to -12); DuckDB gives 0 for a shift past the width and refuses an overflowing left shift.
NARROW_SHIFTS = """
    SELECT order_id, quantity, arrow_cast(quantity * 25, 'Int8') >> arrow_cast(9, 'Int8') AS r9,
           arrow_cast(quantity * 25, 'Int8') << arrow_cast(2, 'Int8') AS l2,
           arrow_cast(quantity * 25, 'Int16') >> arrow_cast(17, 'Int16') AS r17
    FROM order_items WHERE order_id < 1020"""
# SQL over the shop tables, written by DuckDB 1.1.3's substrait extension (its optimizer turns the OR of ranges
# into `constant_or_null` filters).
DUCKDB_SQL = {
    "alias-duckdb-stddev-variance": """
        SELECT product_id, stddev_samp(quantity) AS s_samp, stddev_pop(unit_price) AS s_pop,
               var_samp(quantity) AS v_samp, var_pop(discount) AS v_pop
        FROM order_items GROUP BY product_id ORDER BY product_id""",
    "alias-duckdb-constant-or-null": """
        SELECT count(*) AS n, sum(unit_price) AS total FROM order_items
        WHERE (discount BETWEEN 0.05 AND 0.10 AND quantity > 2) OR (discount BETWEEN 0.15 AND 0.50 AND quantity < 2)""",
}
DUCKDB_PLANS = tuple(DUCKDB_SQL)


@pytest.fixture(scope="module")
def duckdb_plans(shop_dir):
    from producers import duckdb_substrait_plans
    from shop import SHOP_TABLES

    return duckdb_substrait_plans.plans({t: shop_dir / f"{t}.parquet" for t in SHOP_TABLES}, DUCKDB_SQL)


@pytest.fixture(scope="module")
def datafusion_plans(shop_dir):
    return shop_plans_of(shop_dir, {**DATAFUSION_SQL, "alias-narrow-shifts": NARROW_SHIFTS})


@pytest.fixture(scope="module")
def shop_resolver(shop_dir):
    from substrait_spark.consumer import TableMapResolver

    return TableMapResolver.from_tables_dir(str(shop_dir))


def _plan(path: Path) -> Plan:
    from substrait_spark.consumer import load_plan

    return load_plan(str(path)).plan


def _functions(plan: Plan) -> dict[str, tuple[str, str, tuple[tuple[str, str], ...]]]:
    """Each declared function as written -> (base name, extension, implied options) as the engine reads it."""
    from substrait_spark.consumer.loading.extensions import Extensions

    return {r.name: (r.base, r.extension, r.implied) for r in Extensions(plan).functions.values()}


def _features(plan: Plan) -> list[str]:
    from substrait_spark.consumer.analysis.analyze import validate_plan

    return [f.feature for f in validate_plan(plan)]


ARITHMETIC = "extension:io.substrait:functions_arithmetic"
SAMPLE, POPULATION = (("distribution", "SAMPLE"),), (("distribution", "POPULATION"),)


# --- the names each producer writes, read as the spec's functions ----------------------------------------------


@pytest.mark.unit
def test_datafusion_names_read_as_the_spec_functions(datafusion_plans):
    """The pinned DataFusion still writes these names with no extension (the evidence), and each plan validates."""
    stats, grouping = (_plan(datafusion_plans[n].plan) for n in ("alias-stddev-variance", "alias-grouping"))
    assert _functions(stats) == {
        "multiply": ("multiply", "", ()),  # a spec name: as written
        "stddev": ("std_dev", ARITHMETIC, SAMPLE),
        "stddev_pop": ("std_dev", ARITHMETIC, POPULATION),
        "var": ("variance", ARITHMETIC, SAMPLE),
        "var_pop": ("variance", ARITHMETIC, POPULATION),
    }
    assert _functions(grouping)["bitwise_shift_right"] == ("shift_right", ARITHMETIC, ())
    assert _functions(_plan(datafusion_plans["alias-narrow-shifts"].plan))["bitwise_shift_left"][0] == "shift_left"
    for name in datafusion_plans:
        assert _features(_plan(datafusion_plans[name].plan)) == [], name


@pytest.mark.unit
def test_duckdb_1_1_3_names_read_as_the_spec_functions(duckdb_plans):
    stats = _plan(duckdb_plans["alias-duckdb-stddev-variance"].plan)
    assert stats.version.producer == "DuckDB"
    assert _functions(stats) == {
        "stddev_samp": ("std_dev", ARITHMETIC, SAMPLE),
        "stddev_pop": ("std_dev", ARITHMETIC, POPULATION),
        "var_samp": ("variance", ARITHMETIC, SAMPLE),
        "var_pop": ("variance", ARITHMETIC, POPULATION),
    }
    internal = _plan(duckdb_plans["alias-duckdb-constant-or-null"].plan)
    assert _functions(internal)["constant_or_null"][:2] == ("constant_or_null", "extension:org.duckdb:duckdb_internal")
    assert _features(stats) == [] and _features(internal) == []
    from substrait_spark.consumer.loading.extensions import Extensions

    assert Extensions(internal).notes() == [
        "functions under the producer's own names read as: constant_or_null as duckdb_internal/constant_or_null"
    ]  # in the run report


@pytest.mark.unit
def test_another_producers_like_names_stay_unsupported(datafusion_plans, duckdb_plans):
    """Never by a name's likeness: DuckDB's declarations from another producer, a name the producer does not write,
    or its names under an extension are refused as before."""
    refused = {
        "tests/plan_builder": ["stddev_samp", "stddev_pop", "var_samp", "var_pop"],
        "datafusion": ["stddev_samp", "var_samp"],  # stddev_pop and var_pop are DataFusion's names too
    }
    for producer, names in refused.items():
        stats = _plan(duckdb_plans["alias-duckdb-stddev-variance"].plan)
        stats.version.producer = producer
        assert _features(stats) == [f"aggregate function {n}" for n in names], producer
    internal = _plan(duckdb_plans["alias-duckdb-constant-or-null"].plan)
    internal.version.producer = "datafusion"
    assert set(_features(internal)) == {"scalar function constant_or_null"}
    under_an_extension = _plan(datafusion_plans["alias-stddev-variance"].plan)
    urn = under_an_extension.extension_urns.add(extension_urn_anchor=7, urn=ARITHMETIC)
    for decl in under_an_extension.extensions:
        decl.extension_function.extension_urn_reference = urn.extension_urn_anchor
    assert _features(under_an_extension) == [
        f"aggregate function {n}" for n in ("stddev", "stddev_pop", "var", "var_pop")
    ]


def _measures(plan: Plan) -> list:
    """The measures of the plan's (first) aggregate."""
    from substrait import algebra_pb2 as alg
    from substrait_spark.consumer.walk import nodes

    return next(list(m.measures) for m, _ in nodes(plan) if isinstance(m, alg.AggregateRel))


@pytest.mark.unit
def test_a_name_contradicting_its_option_is_invalid(datafusion_plans):
    from substrait_spark.consumer.analysis.analyze import validate_plan
    from substrait_spark.consumer.errors import PlanInvalidError
    from substrait_spark.consumer.loading.extensions import Extensions

    plan = _plan(datafusion_plans["alias-stddev-variance"].plan)
    anchor = next(a for a, r in Extensions(plan).functions.items() if r.name == "stddev_pop")
    pop = next(m for m in _measures(plan) if m.measure.function_reference == anchor)
    pop.measure.options.add(name="distribution", preference=["SAMPLE"])
    with pytest.raises(PlanInvalidError, match="stddev_pop means distribution POPULATION, its option says SAMPLE"):
        validate_plan(plan)


@pytest.mark.unit
def test_datafusions_grouping_id_and_its_repeated_sets():
    """DataFusion's grouping-set column holds its grouping id (ROLLUP(a, b): 0, 1, 3); a repeated set's id is not
    known here: refused (translation raises the same, `Quirks.grouping_id_refusal`)."""
    from plan_builder import aggregate
    from substrait_spark.consumer.loading.producers import Quirks

    b = PlanBuilder()
    t = named("t_alias_types", ["s", "n"], [string(), i64()])
    plan = b.plan(aggregate(t, [field(0), field(1)], sets=[[0, 1], [0], [0]]), ["s", "n", "g"])
    plan.version.producer, plan.version.minor_number = "datafusion", 85
    quirks = Quirks.of(plan)
    assert quirks.grouping_set_ids([[0, 1], [0], []], 2) == [0, 1, 3]
    assert quirks.grouping_set_ids([[1], [0]], 2) == [2, 1]
    assert _features(plan) == ["DataFusion grouping id of repeated grouping sets"]
    plan.version.producer = "isthmus"  # the spec's index: repeated sets are told apart
    assert Quirks.of(plan).grouping_set_ids([[0, 1], [0], []], 2) == [0, 1, 2] and _features(plan) == []


# --- validate applies the translator's argument-type rule ------------------------------------------------------


def _string_compared_with_a_number() -> Plan:
    """A read without a projection whose field 0 is a string, compared by `gt:i64_i64` with a number."""
    b = PlanBuilder()
    t = named("t_alias_types", ["s", "n"], [string(), i64()])
    return b.plan(filter_(t, b.call("gt:i64_i64", field(0), lit(5, i64()), out=boolean())), ["s", "n"])


STRING_VS_NUMBER = "gt:i64_i64: arguments of incompatible types ['int', 'string']"


def _case_without_a_result(producer: str) -> Plan:
    """`CASE n WHEN 1 THEN 'one' END` as DataFusion writes it: the first clause (the operand) has no `then`."""
    from plan_builder import if_then, project

    b = PlanBuilder()
    t = named("t_alias_types", ["s", "n"], [string(), i64()])
    case = if_then([(field(1), lit("")), (lit(1, i64()), lit("one"))])
    case.if_then.ifs[0].ClearField("then")
    plan = b.plan(project(t, case, emit=[2]), ["band"])
    plan.version.producer = producer
    return plan


INVALID = {
    "string compared with a number": (_string_compared_with_a_number, STRING_VS_NUMBER),
    "if-then clause without a result": (
        lambda: _case_without_a_result("tests/plan_builder"),
        "expression with nothing set",
    ),
}


@pytest.mark.unit
def test_validate_refuses_a_string_compared_with_a_number(tmp_path, capsys):
    from substrait_spark.cli import main

    path = tmp_path / "string_vs_number.bin"
    path.write_bytes(_string_compared_with_a_number().SerializeToString())
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert STRING_VS_NUMBER in err and "relations[0].root.input.filter.condition.scalar_function" in err


@pytest.mark.unit
def test_datafusions_case_operand_clause_validates_only_from_datafusion():
    from substrait_spark.consumer.analysis.analyze import validate_plan
    from substrait_spark.consumer.errors import PlanInvalidError

    assert validate_plan(_case_without_a_result("datafusion")) == []
    with pytest.raises(PlanInvalidError, match="expression with nothing set") as exc:
        validate_plan(_case_without_a_result("tests/plan_builder"))
    assert exc.value.path == "relations[0].root.input.project.expressions[0].if_then.ifs[0].then"


@pytest.mark.spark
@pytest.mark.parametrize("name", sorted(INVALID))
def test_validate_and_translation_refuse_the_same_way(name, spark):
    """The same error class, message and path from `validate` and from translation alone (no validate before it)."""
    from plan_builder import run, views
    from substrait_spark.consumer.analysis.analyze import validate_plan
    from substrait_spark.consumer.errors import PlanInvalidError

    build, message = INVALID[name]
    plan = build()
    with pytest.raises(PlanInvalidError) as validated:
        validate_plan(plan)
    with views(spark, {"t_alias_types": ("s string, n bigint", [("a", 1)])}), pytest.raises(PlanInvalidError) as ran:
        run(plan, spark).collect()
    assert (ran.value.message, ran.value.path) == (validated.value.message, validated.value.path)
    assert validated.value.message == message


# --- the answers on Spark ---------------------------------------------------------------------------------------


@pytest.mark.spark
@pytest.mark.parametrize("name", sorted(DATAFUSION_SQL))
def test_datafusion_plan_gives_duckdbs_answer(name, datafusion_plans, spark, shop_resolver, shop_oracle):
    assert_gives_duckdb_answer(
        datafusion_plans[name], DATAFUSION_SQL[name], spark, shop_resolver, shop_oracle, ORDERED[name]
    )


@pytest.mark.spark
def test_datafusion_narrow_shifts_give_datafusions_answer(datafusion_plans, spark, shop_resolver, shop_dir):
    from datafusion import SessionContext
    from oracles import assert_same_result
    from shop import SHOP_TABLES

    ctx = SessionContext()
    for table in SHOP_TABLES:
        ctx.register_parquet(table, str(shop_dir / f"{table}.parquet"))
    expected = [tuple(r.values()) for r in ctx.sql(NARROW_SHIFTS).to_pylist()]
    assert any(r[3] < 0 for r in expected) and any(r[2] != 0 for r in expected)  # it wraps, and 9 is taken as 1
    columns, rows = run_generated(datafusion_plans["alias-narrow-shifts"], spark, shop_resolver)
    assert_same_result(
        rows, expected, actual_columns=columns, expected_columns=["order_id", "quantity", "r9", "l2", "r17"]
    )


@pytest.mark.spark
@pytest.mark.parametrize("name", DUCKDB_PLANS)
def test_duckdb_1_1_3_plan_gives_duckdbs_answer(name, duckdb_plans, spark, shop_resolver, shop_oracle):
    sql = DUCKDB_SQL[name]
    keys = (0,) if "ORDER BY" in sql else ()
    assert_gives_duckdb_answer(duckdb_plans[name], sql, spark, shop_resolver, shop_oracle, keys)
