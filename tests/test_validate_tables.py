"""`validate` sees the tables (issue 28 item 9): with run's table options it names a table missing and a type the
data does not have (exit 4), from parquet footers and Iceberg catalog schemas, without Spark; `run` refuses the
same plans before it starts Spark. Its verdict on a type difference is the run's (`conversions.conversion`,
`--cast-to-plan-types`); what it cannot see without Spark it lists as not checked.

Each command runs as a user runs it (`cli_process`): its own process, timed, with a stub `java` that records a
start of Spark's JVM."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import CLI, stub_java, timed
from shop import shop_arrow

pytestmark = [pytest.mark.unit]

ORDERS_READ = "relations[0].root.input.read.named_table"


def datafusion_plan(path: Path, sql: str, tables: dict) -> Path:
    """DataFusion's plan of `sql` over Arrow tables (as a user's other environment declares them)."""
    from datafusion import SessionContext
    from datafusion.substrait import Serde

    ctx = SessionContext()
    for name, table in tables.items():
        ctx.register_record_batches(name, [table.to_batches()])
    path.write_bytes(Serde.serialize_bytes(sql, ctx))
    return path


def with_column(table, name: str, arrow_type):
    """`table` with column `name` cast to (or, for a type no cast gives, replaced by NULLs of) `arrow_type`."""
    import pyarrow as pa

    i = table.schema.get_field_index(name)
    try:
        column = table[name].cast(arrow_type)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        column = pa.nulls(len(table), arrow_type)
    return table.set_column(i, pa.field(name, arrow_type, table.schema.field(i).nullable), column)


@pytest.fixture(scope="module")
def plans(shop_dir, tmp_path_factory) -> dict[str, Path]:
    """Plans over the shop: as its files are, with a type the data does not have (status as int), with a type a
    lossless cast gives (quantity as decimal(12,2)) and one only a lossy cast gives (unit_price as decimal(5,1))."""
    import pyarrow as pa

    out = tmp_path_factory.mktemp("plans")
    shop = shop_arrow()
    orders_sql = "SELECT order_id, status FROM orders"
    items_sql = "SELECT order_id, quantity, unit_price FROM order_items"
    return {
        "ok": datafusion_plan(out / "ok.bin", orders_sql, {"orders": shop["orders"]}),
        "status_int": datafusion_plan(
            out / "status_int.bin", orders_sql, {"orders": with_column(shop["orders"], "status", pa.int32())}
        ),
        "customers": datafusion_plan(
            out / "customers.bin", "SELECT name FROM customers", {"customers": shop["customers"]}
        ),
        "widening": datafusion_plan(
            out / "widening.bin",
            items_sql,
            {"order_items": with_column(shop["order_items"], "quantity", pa.decimal128(12, 2))},
        ),
        "lossy": datafusion_plan(
            out / "lossy.bin",
            items_sql,
            {"order_items": with_column(shop["order_items"], "unit_price", pa.decimal128(5, 1))},
        ),
    }


def no_spark(tmp_path: Path, *argv: str, cpu_limit: float = 2.0) -> tuple[int, str, str]:
    """Run the CLI; assert it never tried to start Spark's JVM and took under `cpu_limit` s of CPU (about 0.5 s
    with table maps: 1.1-1.5 s of wall clock on a free core). Wall clock is printed and bounded loosely: it grows
    with the machine's load (these tests share 2 cores with other work)."""
    env, marker = stub_java(tmp_path)
    done, wall, cpu = timed([CLI, *argv], env)
    print(f"{argv[0]}: exit {done.returncode}, {wall:.2f} s wall, {cpu:.2f} s CPU")
    assert not marker.exists(), f"Spark's JVM was started: {marker.read_text()}"
    assert cpu < cpu_limit and wall < 12.0, f"{wall:.2f} s wall, {cpu:.2f} s CPU"
    assert "Traceback" not in done.stderr
    return done.returncode, done.stdout, done.stderr


def test_validate_with_tables_dir_names_a_missing_table_and_a_type_the_data_lacks(plans, shop_dir, tmp_path):
    only_orders = tmp_path / "tables"
    only_orders.mkdir()
    (only_orders / "orders.parquet").symlink_to(shop_dir / "orders.parquet")
    args = ["--tables-dir", str(only_orders)]
    code, out, _ = no_spark(tmp_path, "validate", str(plans["ok"]), *args)
    assert code == 0 and out.startswith(f"{plans['ok']}: supported\n")
    code, out, _ = no_spark(tmp_path, "validate", str(plans["status_int"]), str(plans["customers"]), *args)
    assert code == 4
    assert f"{plans['status_int']}: 1 table problem(s)" in out
    assert (
        f"  - resolution failed: table 'orders' does not match the plan's schema: column 'status' is string, plan "
        f"says int (at {ORDERS_READ})"
    ) in out
    assert f"{plans['customers']}: 1 table problem(s)" in out
    assert "  - resolution failed: table 'customers' not found (known tables: orders)" in out


def test_validate_with_table_bindings_and_a_missing_file(plans, shop_dir, tmp_path):
    orders = f"orders={shop_dir / 'orders.parquet'}"
    code, out, _ = no_spark(tmp_path, "validate", str(plans["status_int"]), "--table", orders, "--json")
    assert code == 4
    (result,) = json.loads(out)
    assert result["unsupported"] == [] and len(result["table_problems"]) == 1
    problem = result["table_problems"][0]
    assert problem["exit_code"] == 4 and problem["path"] == ORDERS_READ
    assert "column 'status' is string, plan says int" in problem["message"]
    table_map = tmp_path / "tables.yaml"
    table_map.write_text(json.dumps({"orders": {"uri": str(shop_dir / "orders.parquet"), "format": "parquet"}}))
    code, out, _ = no_spark(tmp_path, "validate", str(plans["status_int"]), "--tables-file", str(table_map))
    assert code == 4 and "column 'status' is string, plan says int" in out
    code, out, _ = no_spark(tmp_path, "validate", str(plans["ok"]), "--table", f"orders={tmp_path / 'gone.parquet'}")
    assert code == 4 and f"cannot read {tmp_path / 'gone.parquet'} as parquet: no such file or folder" in out


def test_validate_accepts_what_the_run_casts_losslessly_and_lossy_casts_only_when_asked(plans, shop_dir, tmp_path):
    """The run's rule (`conversions.conversion`): int -> decimal(12,2) keeps every value; decimal(10,2) ->
    decimal(5,1) does not (a schema mismatch unless --cast-to-plan-types)."""
    args = ["--tables-dir", str(shop_dir)]
    assert no_spark(tmp_path, "validate", str(plans["widening"]), *args)[0] == 0
    code, out, _ = no_spark(tmp_path, "validate", str(plans["lossy"]), *args)
    assert code == 4
    assert "column 'unit_price' is decimal(10,2), plan says decimal(5,1) (a cast would lose information)" in out
    assert "--cast-to-plan-types" in out
    assert no_spark(tmp_path, "validate", str(plans["lossy"]), *args, "--cast-to-plan-types")[0] == 0


def test_validate_lists_what_it_cannot_see_without_spark(plans, shop_dir, tmp_path):
    """Not claimed fine: a timestamp column whose Spark type a setting decides, a table in another format, a table
    only a cluster's session catalog could hold, and no table options at all."""
    import pyarrow.csv as pcsv

    csv = tmp_path / "orders.csv"
    pcsv.write_csv(shop_arrow()["orders"], csv)
    all_orders = datafusion_plan(tmp_path / "all.bin", "SELECT * FROM orders", {"orders": shop_arrow()["orders"]})
    code, out, _ = no_spark(tmp_path, "validate", str(all_orders), "--tables-dir", str(shop_dir))
    assert code == 0
    assert "not checked: table 'orders'" in out and "column 'ordered_at': a timestamp without time zone" in out
    code, out, _ = no_spark(tmp_path, "validate", str(plans["ok"]), "--table", f"orders={csv}")
    assert code == 0 and f"  - not checked: table 'orders' ({csv}): csv data is typed by Spark when it reads it" in out
    code, out, _ = no_spark(tmp_path, "validate", str(plans["ok"]))
    assert (
        code == 0 and "not checked: tables (no --tables-dir, --table, --tables-file or --catalog-config given)" in out
    )


def test_validate_with_an_unbound_table_on_a_cluster_leaves_it_to_the_session_catalog(plans, tmp_path):
    only = tmp_path / "tables"
    only.mkdir()
    args = ["--tables-dir", str(only), "--master", "sc://127.0.0.1:15002"]
    code, out, _ = no_spark(tmp_path, "validate", str(plans["customers"]), *args)
    assert code == 0
    assert "not checked: table 'customers' is in no table map or catalog: Spark's session catalog may hold it" in out


def test_run_refuses_the_same_plans_before_it_starts_spark(plans, shop_dir, tmp_path):
    only = tmp_path / "tables"
    only.mkdir()
    (only / "orders.parquet").symlink_to(shop_dir / "orders.parquet")
    for plan, message in (
        (plans["status_int"], "column 'status' is string, plan says int"),
        (plans["customers"], "table 'customers' not found (known tables: orders)"),
    ):
        code, _, err = no_spark(tmp_path, "run", str(plan), "--tables-dir", str(only))
        assert code == 4 and "resolution failed" in err and message in err
        assert err.count("\n") == 1
    # Control: a plan the check passes goes on to start Spark (the stub java: it fails).
    env, marker = stub_java(tmp_path / "control")
    done, _, _ = timed([CLI, "run", str(plans["ok"]), "--tables-dir", str(only)], env)
    assert done.returncode != 0 and marker.exists()


@pytest.fixture
def iceberg_lake(tmp_path) -> Path:
    """An Iceberg SQLite catalog (pyiceberg only, no Spark) holding shop.orders; its --catalog-config file."""
    import yaml
    from substrait_spark.hooks.iceberg_spark import pyiceberg_catalog, pyiceberg_catalog_properties

    settings = {"uri": tmp_path / "catalog.db", "warehouse": tmp_path / "warehouse"}
    catalog = pyiceberg_catalog("lake", **settings)
    catalog.create_namespace("shop")
    orders = shop_arrow()["orders"]
    catalog.create_table("shop.orders", schema=orders.schema).append(orders)
    config = tmp_path / "catalogs.yaml"
    props = pyiceberg_catalog_properties("lake", **settings)
    config.write_text(yaml.safe_dump({"default": "lake", "catalogs": {"lake": props}}))
    return config


def test_validate_and_run_check_iceberg_tables_without_spark(plans, iceberg_lake, tmp_path):
    """pyiceberg reads the schema (its SQL catalog and file IO imports cost about 1.6 s of CPU, paid by a run too:
    2.2-2.4 s in all on a free core, 2.8 s under the suite's load on 2 cores; starting Spark's JVM costs far more)."""
    args = ["--catalog-config", str(iceberg_lake)]
    code, out, _ = no_spark(tmp_path, "validate", str(plans["ok"]), *args, cpu_limit=4.0)
    assert code == 0 and out == f"{plans['ok']}: supported\n"
    code, out, _ = no_spark(
        tmp_path, "validate", str(plans["status_int"]), str(plans["customers"]), *args, cpu_limit=4.0
    )
    assert code == 4
    assert "table 'orders' (lake.shop.orders) does not match the plan's schema: column 'status' is string" in out
    assert "table 'customers' not found in catalog 'lake'" in out
    code, _, err = no_spark(tmp_path, "run", str(plans["status_int"]), *args, cpu_limit=4.0)
    assert code == 4 and "table 'orders' (lake.shop.orders) does not match the plan's schema" in err
