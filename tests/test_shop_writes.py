"""A new user's writes (issue 28 items 1 and 2): DataFusion's plan of a shop query put under a CTAS and an INSERT
(`shop.wrap_in_write`; DataFusion writes no DML), run through the CLI and `run_plan` into an Iceberg table.

- Write steps' idempotency keys tell the plans run under one run key apart (`steps/log.py`): a CTAS then an INSERT
  into the same table under one `--run-key` both commit, a retry of the batch commits nothing again, and a changed
  plan under a reused run key is refused (exit 2), never skipped.
- A created table has the types the plan declares (decimal(21,2), not the decimal(31,2) Spark's SUM computes), so
  the INSERT of the same query fits it; an input that would lose information in that type is a schema mismatch.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from iceberg_stack import Lake
from oracles import assert_same_result
from plan_builder import WriteRel, ddl, decimal_, i64, string
from shop import SHOP_SQL, wrap_in_write
from substrait import algebra_pb2 as alg
from substrait import plan_pb2
from substrait_spark.consumer.errors import RunKeyReusedError, SchemaMismatchError
from substrait_spark.consumer.running.resolver import ChainResolver, TableMapResolver
from substrait_spark.consumer.running.steps.log import KEY_PROPERTY, PLAN_PROPERTY
from substrait_spark.hooks.iceberg_writes import WritableIcebergResolver

pytestmark = [pytest.mark.spark, pytest.mark.iceberg]

NAMES = ["customer_id", "name", "gross_revenue"]
W = WriteRel


def types(precision: int = 21) -> list:
    return [i64(), string(), decimal_(precision, 2)]


@pytest.fixture(name="ns")
def ns_fixture(lake: Lake, request) -> str:
    name = "shop_" + request.node.name.replace("[", "_").replace("]", "").replace("-", "_")[-50:].lower()
    lake.catalog.create_namespace_if_not_exists(name)
    return name


@pytest.fixture(name="query")
def query_fixture(shop_plans) -> bytes:
    """DataFusion's plan of revenue per customer: `SUM(quantity * unit_price)` declared decimal(21,2)."""
    generated = shop_plans["revenue_per_customer"]
    assert generated.plan is not None, generated.error
    return generated.plan.read_bytes()


def wrapped(query: bytes, ns: str, op: int, precision: int = 21, table: str = "revenue") -> bytes:
    return wrap_in_write(query, [ns, table], NAMES, types(precision), op)


def plan_file(path: Path, body: bytes) -> str:
    from google.protobuf import json_format

    path.write_text(json_format.MessageToJson(plan_pb2.Plan.FromString(body)))
    return str(path)


def cli(lake: Lake, shop_dir: Path, tmp_path: Path, plans: list[str], run_key: str, out: str = "out") -> tuple:
    """`substrait-spark run PLAN... --run-key KEY` on the lake and the shop's files: exit code, summary, stderr."""
    from substrait_spark.cli import main

    config = lake.write_config(tmp_path / "catalogs.yaml")
    args = [*plans, "--catalog-config", str(config), "--tables-dir", str(shop_dir), "--run-key", run_key]
    code = main(["run", *args, "--output-dir", str(tmp_path / out)])
    summary = json.loads((tmp_path / out / "summary.json").read_text())
    return code, summary["plans"]


def snapshots(lake: Lake, ns: str, table: str = "revenue") -> list:
    return lake.catalog.load_table(f"{ns}.{table}").snapshots()


def rows(lake: Lake, ns: str, table: str = "revenue") -> int:
    return lake.catalog.load_table(f"{ns}.{table}").scan().to_arrow().num_rows


def column_type(lake: Lake, ns: str, name: str = "gross_revenue", table: str = "revenue") -> str:
    return str(lake.catalog.load_table(f"{ns}.{table}").schema().find_field(name).field_type)


def test_a_ctas_and_an_insert_under_one_run_key_both_commit_once(lake, shop_dir, shop_oracle, query, ns, tmp_path):
    ctas = plan_file(tmp_path / "ctas_copy.json", wrapped(query, ns, W.WRITE_OP_CTAS))
    insert = plan_file(tmp_path / "insert_copy.json", wrapped(query, ns, W.WRITE_OP_INSERT))
    code, plans = cli(lake, shop_dir, tmp_path, [ctas, insert], "nightly/2026-11-28", "first")
    assert code == 0, plans
    steps = [p["steps"][0] for p in plans]
    assert [(s["kind"], s["status"]) for s in steps] == [("ctas", "committed"), ("insert", "committed")]
    keys = [s["idempotency_key"] for s in steps]
    shas = [p["plan_sha256"] for p in plans]
    assert keys == [f"nightly/2026-11-28/{i}/{sha[:12]}/step-0" for i, sha in enumerate(shas)]
    expected = len(shop_oracle.run(SHOP_SQL["revenue_per_customer"]).rows)
    history = snapshots(lake, ns)
    assert len(history) == 2 and rows(lake, ns) == 2 * expected
    assert [s.summary.additional_properties[KEY_PROPERTY] for s in history] == keys
    assert [s.summary.additional_properties[PLAN_PROPERTY] for s in history] == shas
    # The retry of the whole batch finds both commits: nothing is written twice.
    code, plans = cli(lake, shop_dir, tmp_path, [ctas, insert], "nightly/2026-11-28", "retry")
    assert code == 0, plans
    assert [(p["steps"][0]["status"], p["steps"][0]["skip"]) for p in plans] == [("skipped", "already_committed")] * 2
    assert len(snapshots(lake, ns)) == 2 and rows(lake, ns) == 2 * expected


def test_a_changed_plan_under_a_reused_run_key_is_refused(lake, shop_dir, query, ns, tmp_path, capsys):
    first = plan_file(tmp_path / "insert_copy.json", wrapped(query, ns, W.WRITE_OP_CTAS))
    assert cli(lake, shop_dir, tmp_path, [first], "k", "first")[0] == 0
    before = len(snapshots(lake, ns)), rows(lake, ns)
    changed = wrapped(query, ns, W.WRITE_OP_CTAS, precision=38)  # another plan in the same file, same place
    code, plans = cli(lake, shop_dir, tmp_path, [plan_file(tmp_path / "insert_copy.json", changed)], "k", "again")
    assert code == 2
    err = capsys.readouterr().err
    earlier = snapshots(lake, ns)[0].summary.additional_properties[PLAN_PROPERTY]
    assert "run key 'k' was used with another plan" in err and f"plan sha256 {earlier}" in err
    assert "new run key" in err and plans[0]["error"]["kind"] == "run key reused"
    assert (len(snapshots(lake, ns)), rows(lake, ns)) == before


def run_plan_resolver(lake: Lake, shop_dir: Path) -> ChainResolver:
    return ChainResolver([TableMapResolver.from_tables_dir(shop_dir), WritableIcebergResolver(lake.catalogs())])


def test_run_plan_with_one_run_key_for_two_plans(lake, shop_dir, query, ns):
    from substrait_spark import run_plan

    resolver = run_plan_resolver(lake, shop_dir)
    ctas, insert = wrapped(query, ns, W.WRITE_OP_CTAS), wrapped(query, ns, W.WRITE_OP_INSERT)
    for attempt in range(2):  # the second: a retry of both
        reports = [run_plan(p, lake.spark, resolver, run_key="job/7", slot=i) for i, p in enumerate((ctas, insert))]
        statuses = [r.steps[0].status.value for r in reports]
        assert statuses == (["committed"] * 2 if attempt == 0 else ["skipped"] * 2)
    assert len(snapshots(lake, ns)) == 2 and column_type(lake, ns) == "decimal(21, 2)"
    changed = wrapped(query, ns, W.WRITE_OP_INSERT, precision=38)
    with pytest.raises(RunKeyReusedError, match="run key 'job/7' was used with another plan: step 0 of plan slot 1"):
        run_plan(changed, lake.spark, resolver, run_key="job/7", slot=1)
    # Without slots the second plan of a batch meets the first's commit: refused as well, never skipped.
    with pytest.raises(RunKeyReusedError, match="give each its own slot"):
        run_plan(insert, lake.spark, resolver, run_key="job/7")
    assert len(snapshots(lake, ns)) == 2


@pytest.mark.parametrize("precision", [21, 38])
def test_ctas_creates_the_declared_types_and_the_insert_fits(lake, shop_dir, shop_oracle, query, ns, precision):
    """decimal(21,2) is the SUM's declared type; decimal(38,2) takes it without loss (a cast)."""
    from substrait_spark import run_plan

    resolver = run_plan_resolver(lake, shop_dir)
    for op in (W.WRITE_OP_CTAS, W.WRITE_OP_INSERT):
        run_plan(wrapped(query, ns, op, precision), lake.spark, resolver)
    assert column_type(lake, ns) == f"decimal({precision}, 2)"
    expected = shop_oracle.run(SHOP_SQL["revenue_per_customer"]).rows
    got = lake.spark.read.table(f"{lake.name}.{ns}.revenue").collect()
    assert_same_result([tuple(r) for r in got], expected * 2)


def test_a_ctas_into_a_narrower_type_is_a_schema_mismatch(lake, shop_dir, query, ns):
    from substrait_spark import run_plan

    with pytest.raises(
        SchemaMismatchError,
        match=r"'gross_revenue': input is decimal\(21,2\), table_schema says "
        r"decimal\(20,2\) \(a cast would lose information\)",
    ) as info:
        run_plan(wrapped(query, ns, W.WRITE_OP_CTAS, 20), lake.spark, run_plan_resolver(lake, shop_dir))
    assert info.value.exit_code == 4
    assert not lake.catalog.table_exists(f"{ns}.revenue")


def test_create_table_ddl_then_the_insert_of_the_query(lake, shop_dir, query, ns):
    from plan_builder import PlanBuilder
    from substrait_spark import run_plan

    create = PlanBuilder().plan(ddl([ns, "revenue"], alg.DdlRel.DDL_OP_CREATE, names=NAMES, types=types()), NAMES)
    resolver = run_plan_resolver(lake, shop_dir)
    run_plan(create.SerializeToString(), lake.spark, resolver)
    assert column_type(lake, ns) == "decimal(21, 2)"
    report = run_plan(wrapped(query, ns, W.WRITE_OP_INSERT), lake.spark, resolver)
    assert report.steps[0].status.value == "committed" and rows(lake, ns) == report.steps[0].rows > 0


def test_a_root_table_sink_has_the_roots_declared_types(lake, shop_dir, query, ns):
    from substrait_spark import run_plan

    name = f"{ns}_revenue"
    run_plan(query, lake.spark, run_plan_resolver(lake, shop_dir), output=f"table:{name}")
    try:
        assert lake.spark.table(name).schema["gross_revenue"].dataType.simpleString() == "decimal(21,2)"
    finally:
        lake.spark.sql(f"DROP TABLE IF EXISTS {name}")


@pytest.mark.parametrize(("value", "fits"), [(7, True), (2**40, False)], ids=["fits", "too-big"])
def test_a_created_int_column_takes_values_exactly_or_fails(lake, ns, value, fits):
    """A bigint input into a table_schema's int column (integers of any width stand for each other): the table is
    created with int, and a value int cannot hold fails the step — never a wrapped number in the table."""
    from plan_builder import PlanBuilder, i32, virtual, write
    from substrait_spark import run_plan
    from substrait_spark.consumer.errors import ExecutionError

    rel = write([ns, "ids"], virtual(["id"], [i64()], [(value,)]), ["id"], [i32()], op=W.WRITE_OP_CTAS)
    plan = PlanBuilder().plan(rel, ["id"]).SerializeToString()
    resolver = WritableIcebergResolver(lake.catalogs())
    if fits:
        run_plan(plan, lake.spark, resolver)
        assert column_type(lake, ns, "id", "ids") == "int"
        assert lake.catalog.load_table(f"{ns}.ids").scan().to_arrow().to_pylist() == [{"id": 7}]
        return
    with pytest.raises(ExecutionError, match=r"column 'id' \(bigint\) does not fit int"):
        run_plan(plan, lake.spark, resolver)
    assert not lake.catalog.table_exists(f"{ns}.ids")


def test_an_insert_of_a_value_the_tables_int_column_cannot_hold_fails(lake, ns):
    """INSERT leaves the cast into the table's own types to Spark's store assignment (ANSI: an overflow fails)."""
    from plan_builder import PlanBuilder, i32, virtual, write
    from substrait_spark import run_plan
    from substrait_spark.consumer.errors import ExecutionError

    resolver = WritableIcebergResolver(lake.catalogs())
    for value, op in ((7, W.WRITE_OP_CTAS), (2**40, W.WRITE_OP_INSERT)):
        rel = write([ns, "ids"], virtual(["id"], [i64()], [(value,)]), ["id"], [i32()], op=op)
        plan = PlanBuilder().plan(rel, ["id"]).SerializeToString()
        if op == W.WRITE_OP_CTAS:
            run_plan(plan, lake.spark, resolver)
            continue
        with pytest.raises(ExecutionError):
            run_plan(plan, lake.spark, resolver)
    assert lake.catalog.load_table(f"{ns}.ids").scan().to_arrow().to_pylist() == [{"id": 7}]


# --- nullability: a created table's REQUIRED and NULLABLE columns are the table_schema's -----------------------


def required_flags(lake: Lake, ns: str, table: str) -> list[bool]:
    return [f.required for f in lake.catalog.load_table(f"{ns}.{table}").schema().fields]


def spark_nullable(lake: Lake, ns: str, table: str) -> list[bool]:
    return [f.nullable for f in lake.spark.read.table(f"{lake.name}.{ns}.{table}").schema.fields]


def shop_query(shop_plans, name: str) -> bytes:
    generated = shop_plans[name]
    assert generated.plan is not None, generated.error
    return generated.plan.read_bytes()


COUNTRY = ["country", "orders"]  # orders_by_country: country has NULLs; orders is a COUNT (never NULL in Spark)


def test_ctas_creates_the_declared_nullability_and_the_insert_fits(lake, shop_dir, shop_oracle, query, ns):
    """customer_id and name declared REQUIRED (their input, read from Parquet, is nullable), gross_revenue
    NULLABLE: the table has exactly that, and the INSERT of the same query into it runs."""
    from substrait_spark import run_plan

    resolver = run_plan_resolver(lake, shop_dir)
    declared = [i64(nullable=False), string(nullable=False), decimal_(21, 2)]
    for op in (W.WRITE_OP_CTAS, W.WRITE_OP_INSERT):
        report = run_plan(wrap_in_write(query, [ns, "revenue"], NAMES, declared, op), lake.spark, resolver)
        assert report.steps[0].status.value == "committed"
    assert required_flags(lake, ns, "revenue") == [True, True, False]
    assert spark_nullable(lake, ns, "revenue") == [False, False, True]
    expected = shop_oracle.run(SHOP_SQL["revenue_per_customer"]).rows
    assert len(snapshots(lake, ns)) == 2 and rows(lake, ns) == 2 * len(expected)


def test_a_replacing_ctas_creates_the_declared_nullability(lake, shop_dir, query, ns):
    """CREATE_MODE_REPLACE_IF_EXISTS over a table of optional columns: the atomic replace has the new
    table_schema's nullability too."""
    from substrait_spark import run_plan

    resolver = run_plan_resolver(lake, shop_dir)
    run_plan(wrapped(query, ns, W.WRITE_OP_CTAS), lake.spark, resolver)
    assert required_flags(lake, ns, "revenue") == [False, False, False]
    declared = [i64(nullable=False), string(nullable=False), decimal_(21, 2)]
    replace = W.CREATE_MODE_REPLACE_IF_EXISTS
    run_plan(wrap_in_write(query, [ns, "revenue"], NAMES, declared, W.WRITE_OP_CTAS, replace), lake.spark, resolver)
    assert required_flags(lake, ns, "revenue") == [True, True, False]
    assert len(snapshots(lake, ns)) == 2


def test_a_nullable_column_is_optional_even_when_its_input_cannot_be_null(lake, shop_dir, shop_plans, ns):
    """`orders` is a COUNT (Spark knows it is never NULL), declared NULLABLE: the created column is optional, so
    a later NULL fits it."""
    from plan_builder import PlanBuilder, virtual, write
    from substrait_spark import run_plan

    query = shop_query(shop_plans, "orders_by_country")
    resolver = run_plan_resolver(lake, shop_dir)
    run_plan(wrap_in_write(query, [ns, "counts"], COUNTRY, [string(), i64()], W.WRITE_OP_CTAS), lake.spark, resolver)
    assert required_flags(lake, ns, "counts") == [False, False]
    assert spark_nullable(lake, ns, "counts") == [True, True]
    rel = write([ns, "counts"], virtual(COUNTRY, [string(), i64()], [("XX", None)]), COUNTRY, [string(), i64()])
    run_plan(PlanBuilder().plan(rel, COUNTRY).SerializeToString(), lake.spark, resolver)
    assert rows(lake, ns, "counts") == len(lake.spark.read.table(f"{lake.name}.{ns}.counts").collect())
    assert lake.spark.read.table(f"{lake.name}.{ns}.counts").where("orders IS NULL").count() == 1


def test_a_null_in_a_required_column_fails_the_ctas_and_creates_nothing(lake, shop_dir, shop_plans, ns, tmp_path):
    """country declared REQUIRED, and a customer has none: the step fails, typed, naming the column; no table, no
    commit — never a NULL written or the row dropped."""
    from substrait_spark import run_plan
    from substrait_spark.consumer.errors import RequiredColumnNullError

    body = wrap_in_write(
        shop_query(shop_plans, "orders_by_country"),
        [ns, "counts"],
        COUNTRY,
        [string(nullable=False), i64(nullable=False)],
        W.WRITE_OP_CTAS,
    )
    with pytest.raises(
        RequiredColumnNullError, match=rf"NULL in required column 'country' of table {lake.name}\.{ns}\.counts"
    ) as info:
        run_plan(body, lake.spark, run_plan_resolver(lake, shop_dir))
    assert info.value.exit_code == 1 and info.value.kind == "null in required column"
    assert info.value.report.steps[0].status.value == "failed"
    assert not lake.catalog.table_exists(f"{ns}.counts")
    # The CLI: exit 1, the error's kind and column in the summary.
    code, plans = cli(lake, shop_dir, tmp_path, [plan_file(tmp_path / "ctas.json", body)], "nulls")
    assert code == 1 and plans[0]["error"]["kind"] == "null in required column"
    assert "'country'" in plans[0]["error"]["message"]
    assert not lake.catalog.table_exists(f"{ns}.counts")


def test_an_insert_of_a_null_into_a_required_column_fails_the_step(lake, shop_dir, shop_plans, ns):
    """A table created by DDL with REQUIRED columns (an INSERT of nullable input without NULLs into such columns:
    `test_ctas_creates_the_declared_nullability_and_the_insert_fits`): a NULL fails the step naming the column,
    and the table keeps its (empty) state."""
    from plan_builder import PlanBuilder
    from substrait_spark import run_plan
    from substrait_spark.consumer.errors import RequiredColumnNullError

    resolver = run_plan_resolver(lake, shop_dir)
    required = [string(nullable=False), i64(nullable=False)]
    create = PlanBuilder().plan(ddl([ns, "counts"], alg.DdlRel.DDL_OP_CREATE, names=COUNTRY, types=required), COUNTRY)
    run_plan(create.SerializeToString(), lake.spark, resolver)
    assert required_flags(lake, ns, "counts") == [True, True]
    insert = wrap_in_write(
        shop_query(shop_plans, "orders_by_country"), [ns, "counts"], COUNTRY, required, W.WRITE_OP_INSERT
    )
    with pytest.raises(
        RequiredColumnNullError, match=rf"NULL in required column 'country' of table {lake.name}\.{ns}\.counts"
    ):
        run_plan(insert, lake.spark, resolver)
    assert snapshots(lake, ns, "counts") == [] and rows(lake, ns, "counts") == 0


def test_a_root_table_sink_into_an_iceberg_catalog_creates_optional_columns(lake, shop_dir, shop_plans, ns):
    """A root declares no nullability: the table a sink creates has every column optional, even `orders` (a COUNT,
    which Spark knows is never NULL), so later appends of NULLs fit it."""
    from substrait_spark import run_plan

    query = shop_query(shop_plans, "orders_by_country")
    run_plan(query, lake.spark, run_plan_resolver(lake, shop_dir), output=f"table:{lake.name}.{ns}.counts")
    assert required_flags(lake, ns, "counts") == [False, False]
    assert rows(lake, ns, "counts") > 0
