"""Dagster: plans as assets, end to end with real Dagster, real Spark and the SQLite Iceberg catalog.

Covered: the example definitions computed from the plans without Spark (keys, deps, checks); the real
`dagster asset materialize -f dags_examples/dagster/definitions.py --select '*'`, its materialization metadata
against DuckDB (the same queries) and pyiceberg (the table as the catalog has it), column lineage pointing at the
upstream assets' own keys and column names; a daily-partitioned asset materialized in-process for two days, each
equal to DuckDB's; a run killed after its first commit and re-executed from failure applying no step twice; the
schema checks against the parquet tables.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.dataset as ds
import pytest
from local_stack import ServerDidNotStart, free_port, serving
from oracles import DuckDBOracle, assert_same_result, tpch_q01_until

dagster = pytest.importorskip("dagster", reason="the dagster extra is not installed (make venv installs it)")

from dagster import AssetKey, DagsterInstance, DailyPartitionsDefinition, materialize  # noqa: E402
from substrait_spark.dagster import SubstraitSparkResource, substrait_assets  # noqa: E402
from substrait_spark.dagster import metadata as md  # noqa: E402

pytestmark = [pytest.mark.spark, pytest.mark.iceberg, pytest.mark.dagster]

ROOT = Path(__file__).resolve().parent.parent
DEFINITIONS = ROOT / "dags_examples" / "dagster" / "definitions.py"
PLANS = ROOT / "dags_examples" / "plans"
BIN = Path(sys.executable).parent
DAY, OTHER_DAY = "1995-06-17", "1993-03-01"
BIG_ORDERS = AssetKey(["lake", "demo", "big_orders"])
PRICING = AssetKey(["reports", "pricing_summary"])
ORDERS, LINEITEM = AssetKey(["orders"]), AssetKey(["lineitem"])


def dagster_home(path: Path) -> Path:
    """An instance folder: telemetry and the welcome pop-up off."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "dagster.yaml").write_text("telemetry:\n  enabled: false\nnux:\n  enabled: false\n")
    return path


def example_env(tmp: Path, tpch_dir: Path) -> dict[str, str]:
    """The example definitions on a lake, reports folder and instance of this test's own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DAGSTER", "SUBSTRAIT_"))}
    env.update(
        DAGSTER_HOME=str(dagster_home(tmp / "dagster_home")),
        SUBSTRAIT_DAGSTER_LAKE=str(tmp / "lake"),
        SUBSTRAIT_TABLES_DIR=str(tpch_dir),
        SUBSTRAIT_REPORTS_DIR=str(tmp / "reports"),
        SPARK_LOCAL_IP="127.0.0.1",
        PYSPARK_PYTHON=sys.executable,
    )
    return env


def lake_catalog(tmp: Path):
    from substrait_spark.hooks.iceberg_spark import pyiceberg_catalog

    return pyiceberg_catalog("lake", uri=tmp / "lake" / "catalog.db", warehouse=tmp / "lake" / "warehouse")


def orders_count(tpch_dir: Path, where: str) -> int:
    db = DuckDBOracle(tpch_dir, ["orders"])
    try:
        return db.run(f"select count(*) from orders where {where}").rows[0][0]
    finally:
        db.close()


def latest(instance: DagsterInstance, key: AssetKey):
    event = instance.get_latest_materialization_event(key)
    assert event is not None, f"no materialization of {key}"
    return event.asset_materialization


def parquet_columns(path: Path | str) -> set[str]:
    return set(ds.dataset(str(path), format="parquet").schema.names)


def lineage_deps(materialization) -> list[tuple[AssetKey, str]]:
    lineage = materialization.metadata[md.COLUMN_LINEAGE].value
    return [(d.asset_key, d.column_name) for deps in lineage.deps_by_column.values() for d in deps]


# --- definitions, without Spark -----------------------------------------------------------------------------


def test_example_definitions_come_from_the_plans_without_spark(tmp_path, tpch_dir):
    """Loading the definitions reads and parses the plans only: keys from the catalog identifier, deps on the
    tables read (keyed as the source assets are), a blocking plan-validation check per asset; no JVM starts."""
    code = (
        "import sys, runpy\n"
        f"defs = runpy.run_path({str(DEFINITIONS)!r})['defs']\n"
        "from pyspark import SparkContext\n"
        "assert SparkContext._active_spark_context is None\n"
        "graph = defs.resolve_asset_graph()\n"
        "for key in sorted(graph.get_all_asset_keys()):\n"
        "    node = graph.get(key)\n"
        "    checks = sorted((c.name, graph.get_check_spec(c).blocking) for c in node.check_keys)\n"
        "    print('/'.join(key.path), sorted('/'.join(p.path) for p in node.parent_keys), checks)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=example_env(tmp_path, tpch_dir), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == [
        "lake/demo/big_orders ['orders'] [('plan_valid', True)]",
        "lineitem [] [('pricing_summary_schema_matches', False)]",
        "orders [] [('big_orders_schema_matches', False)]",
        "reports/pricing_summary ['lineitem'] [('plan_valid', True)]",
    ]


# --- the real `dagster asset materialize` ------------------------------------------------------------------------


def test_materialize_all_examples_reports_what_duckdb_and_pyiceberg_see(tmp_path, tpch_dir, monkeypatch):
    env = example_env(tmp_path, tpch_dir)
    cmd = [str(BIN / "dagster"), "asset", "materialize", "-f", str(DEFINITIONS), "--select", "*", "--partition", DAY]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, (done.stdout + done.stderr)[-5000:]
    assert done.stderr.count("STEP_START") == 2 and len(set(_pids(done.stderr, "STEP_START"))) == 1  # one process

    monkeypatch.setenv("DAGSTER_HOME", env["DAGSTER_HOME"])
    instance = DagsterInstance.get()

    # The table pipeline: CTAS + INSERT + DELETE on lake.demo.big_orders.
    assert_big_orders(latest(instance, BIG_ORDERS), tmp_path, tpch_dir)

    # The daily report for DAY: q1 up to that day, as parquet; its lineage on lineitem's columns.
    m = latest(instance, PRICING)
    assert m.partition == DAY
    oracle = tpch_q01_until(tpch_dir, DAY)
    location = m.metadata[md.URI].value
    assert location.endswith(f"pricing_summary/ds={DAY}")
    published = ds.dataset(location, format="parquet").to_table()
    assert m.metadata[md.ROW_COUNT].value == published.num_rows == len(oracle.rows)
    assert_same_result([tuple(r.values()) for r in published.to_pylist()], oracle.rows, context=f"report {DAY}")
    deps = lineage_deps(m)
    assert {k for k, _ in deps} == {LINEITEM}
    assert {c for _, c in deps} <= parquet_columns(tpch_dir / "lineitem.parquet")  # the plan says L_QUANTITY
    assert {c for _, c in deps} >= {"l_quantity", "l_extendedprice", "l_discount", "l_tax"}
    checks = instance.event_log_storage.get_latest_asset_check_execution_by_key(
        [_check_key(BIG_ORDERS), _check_key(PRICING)]
    )
    assert {k.asset_key: e.status.value for k, e in checks.items()} == {BIG_ORDERS: "SUCCEEDED", PRICING: "SUCCEEDED"}


def assert_big_orders(m, lake_dir: Path, tpch_dir: Path) -> None:
    """A materialization of lake/demo/big_orders (CTAS + INSERT + DELETE) against pyiceberg and DuckDB."""
    import hashlib

    table = lake_catalog(lake_dir).load_table("demo.big_orders")
    rows = table.scan().to_arrow()
    expected = orders_count(tpch_dir, "o_totalprice between 350000 and 450000")
    assert m.metadata[md.ROW_COUNT].value == rows.num_rows == expected
    assert m.metadata[md.TABLE_NAME].value == "lake.demo.big_orders"
    assert m.metadata[md.URI].value == table.metadata.location
    assert m.tags["dagster/data_version"] == str(table.current_snapshot().snapshot_id)
    schema = m.metadata[md.COLUMN_SCHEMA].value
    assert [(c.name, c.type) for c in schema.columns] == [(f.name, str(f.field_type)) for f in table.schema().fields]
    steps = m.metadata[md.STEPS].value
    assert [s["kind"] for s in steps] == ["ctas", "insert", "delete"]
    assert [s["rows"] for s in steps] == [
        orders_count(tpch_dir, "o_totalprice > 400000"),
        orders_count(tpch_dir, "o_totalprice between 350000 and 400000"),
        orders_count(tpch_dir, "o_totalprice > 450000"),
    ]
    assert steps[-1]["snapshot_id"] == table.current_snapshot().snapshot_id
    # What the steps changed is not the table's size (issue 28 item 12): its own key beside dagster/row_count.
    assert m.metadata[md.ROWS_CHANGED].value == sum(s["rows"] for s in steps) != rows.num_rows
    plan_bytes = (PLANS / "big_orders_pipeline.json").read_bytes()
    assert m.metadata[md.PLAN_SHA256].value == hashlib.sha256(plan_bytes).hexdigest()
    # Column lineage: the upstream asset's own key and its columns as its parquet files spell them.
    deps = lineage_deps(m)
    assert {k for k, _ in deps} == {ORDERS}
    assert {c for _, c in deps} == {"o_orderkey", "o_totalprice"} <= parquet_columns(tpch_dir / "orders.parquet")
    assert set(m.metadata[md.COLUMN_LINEAGE].value.deps_by_column) == {f.name for f in table.schema().fields}


def _check_key(asset: AssetKey):
    from dagster import AssetCheckKey

    return AssetCheckKey(asset, "plan_valid")


def _pids(log: str, event: str) -> list[str]:
    """The process ids of the log lines of `event` (Dagster's `- <pid> -` field)."""
    return [line.split(" - ")[3] for line in log.splitlines() if f" - {event} - " in line]


# --- partitions, in process ------------------------------------------------------------------------------------


def test_two_partitions_bind_their_day_and_give_each_duckdbs_result(spark, tpch_dir, tmp_path):
    resource = SubstraitSparkResource(tables_dir=str(tpch_dir))
    assets = substrait_assets(
        str(PLANS / "daily_pricing_summary.json"),
        resource=resource,
        partitions_def=DailyPartitionsDefinition(start_date="1992-01-01"),
        partition_parameter=0,
        results={"path": str(tmp_path / "ds={partition_key}"), "format": "parquet"},
        root_asset=PRICING.path,
    )
    published = {}
    instance = DagsterInstance.ephemeral()
    for day in (DAY, OTHER_DAY):
        result = materialize([assets], partition_key=day, resources={"substrait": resource}, instance=instance)
        assert result.success
        # The run's log says what the run did, a line per part (as the Airflow task log: `narration.report_lines`).
        said = [entry.user_message for entry in instance.all_logs(result.run_id)]
        assert f"Parameter $0 (date) = '{day}' from the caller" in said
        assert any(line.startswith("Run success in ") and " rows from 1 root(s)" in line for line in said), said
        [m] = result.asset_materializations_for_node(assets.op.name)
        assert m.partition == day
        assert m.metadata["substrait/parameters"].value == [
            {"anchor": 0, "type": "date", "value": day, "source": "caller"}
        ]
        table = ds.dataset(str(tmp_path / f"ds={day}"), format="parquet").to_table()
        rows = [tuple(r.values()) for r in table.to_pylist()]
        assert m.metadata[md.ROW_COUNT].value == len(rows)
        assert_same_result(rows, tpch_q01_until(tpch_dir, day).rows, context=f"partition {day}")
        published[day] = sorted(map(repr, rows))
    assert published[DAY] != published[OTHER_DAY]
    assert spark.range(1).count() == 1  # the session the resource found running is left running


STARTS_ITS_OWN = """
import json, sys
from dagster import materialize
from pyspark import SparkContext
from substrait_spark.dagster import SparkResource, SubstraitSparkResource, substrait_assets

plan, tables_dir = sys.argv[1:]
resource = SubstraitSparkResource(spark=SparkResource(master="local[1]"), tables_dir=tables_dir)
assets = substrait_assets(plan, resource=resource, root_asset=["result"])
result = materialize([assets], resources={"substrait": resource})
[m] = result.asset_materializations_for_node(assets.op.name)
print(json.dumps({"success": result.success, "rows": m.metadata["dagster/row_count"].value,
                  "after": SparkContext._active_spark_context is not None}))
"""


def test_the_spark_resource_stops_the_session_it_started(tpch_dir):
    """A process with no Spark: the resource starts `local[1]` for the run and stops it when the run ends."""
    import json

    plan = str(PLANS / "daily_pricing_summary.json")
    done = subprocess.run(
        [sys.executable, "-c", STARTS_ITS_OWN, plan, str(tpch_dir)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got == {"success": True, "rows": len(tpch_q01_until(tpch_dir, "1998-09-01").rows), "after": False}


def test_an_invalid_parameter_fails_the_blocking_check_and_materializes_nothing(spark, tpch_dir, tmp_path):
    resource = SubstraitSparkResource(tables_dir=str(tpch_dir))
    assets = substrait_assets(
        str(PLANS / "daily_pricing_summary.json"),
        resource=resource,
        parameters={"0": "not a date"},
        results={"path": str(tmp_path / "out"), "format": "parquet"},
        root_asset=PRICING.path,
    )
    result = materialize([assets], resources={"substrait": resource}, raise_on_error=False)
    assert not result.success
    assert result.asset_materializations_for_node(assets.op.name) == []
    [check] = result.get_asset_check_evaluations()
    assert not check.passed and "not a date" in check.metadata["error"].value
    assert not (tmp_path / "out").exists()


def test_an_unbound_parameter_or_a_plan_gone_fails_the_check_in_dagsters_words(tpch_dir, tmp_path):
    """Issue 28 item 12: the blocking check's error says how a Dagster user binds a parameter (not the CLI's
    `--param`), and a plan removed after the definitions loaded is `plan not found` once (no Spark: both fail first)."""
    from google.protobuf import json_format
    from plan_builder import PlanBuilder, date, field, filter_, i64, named, param

    resource = SubstraitSparkResource(tables_dir=str(tpch_dir))
    b = PlanBuilder()  # SELECT o_orderkey, o_orderdate FROM orders WHERE o_orderdate = $0, $0 with no plan binding
    read = named(["orders"], ["o_orderkey", "o_orderdate"], [i64(), date()])
    plan = tmp_path / "orders_of_the_day.json"
    built = b.plan(filter_(read, b.call("equal", field(1), param(0, date()))), ["o_orderkey", "o_orderdate"])
    plan.write_text(json_format.MessageToJson(built))
    unbound = substrait_assets(str(plan), resource=resource, root_asset=PRICING.path)
    result = materialize([unbound], resources={"substrait": resource}, raise_on_error=False)
    [check] = result.get_asset_check_evaluations()
    error = check.metadata["error"].value
    assert not check.passed and error.startswith(
        "invalid plan: dynamic parameter $0 has no value: bind it with "
        'substrait_assets(parameters={"0": VALUE}) (a component plan\'s `parameters`) or partition_parameter=0'
    )
    assert "--param" not in error and result.asset_materializations_for_node(unbound.op.name) == []

    gone = substrait_assets(str(plan), resource=resource, parameters={"0": DAY}, root_asset=PRICING.path)
    plan.unlink()
    result = materialize([gone], resources={"substrait": resource}, raise_on_error=False)
    [check] = result.get_asset_check_evaluations()
    assert not check.passed and check.metadata["error"].value == f"plan not found: {plan}: no such file"
    [failure] = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert failure.step_failure_data.user_failure_data.description == f"plan not found: {plan}: no such file"


# --- retry safety --------------------------------------------------------------------------------------------


REEXECUTE = """
import sys
from dagster import DagsterInstance, ReexecutionOptions, execute_job
from dagster._core.definitions.reconstruct import ReconstructableRepository

instance = DagsterInstance.get()
[killed] = instance.get_runs(limit=1)
if not killed.is_finished:  # what the run monitor does with a run whose process died
    instance.report_run_failed(killed)
job = ReconstructableRepository.for_file(sys.argv[1], "defs").get_reconstructable_job("table_pipeline")
options = ReexecutionOptions.from_failure(killed.run_id, instance)
result = execute_job(job, instance, reexecution_options=options)
print(killed.run_id, result.run_id, result.success)
"""


def test_reexecuting_a_run_killed_after_its_first_commit_applies_no_step_twice(tmp_path, tpch_dir, monkeypatch):
    from substrait_spark.consumer.running.steps.log import KEY_PROPERTY

    env = example_env(tmp_path, tpch_dir)

    def committed_keys() -> list[str]:
        try:
            table = lake_catalog(tmp_path).load_table("demo.big_orders")
        except Exception:  # not created yet
            return []
        return [s.summary.additional_properties.get(KEY_PROPERTY) for s in table.snapshots()]

    cmd = [str(BIN / "dagster"), "job", "execute", "-f", str(DEFINITIONS), "-j", "table_pipeline"]
    proc = subprocess.Popen(
        cmd, env=env, cwd=tmp_path, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 300
        while not any(k and k.endswith("/step-0") for k in committed_keys()):
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)  # the crash: right after the first commit
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    at_crash = committed_keys()
    assert not any(k.endswith("/step-2") for k in at_crash)

    done = subprocess.run(
        [sys.executable, "-c", REEXECUTE, str(DEFINITIONS)], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-5000:]
    killed_id, rerun_id, success = done.stdout.split()[-3:]
    assert success == "True" and rerun_id != killed_id

    keys = committed_keys()
    shas = {k.split("/")[4] for k in keys}  # dagster/<run>/<op>/<slot>/<plan sha256 prefix>/step-<i>
    assert len(shas) == 1
    sha = shas.pop()
    assert sorted(keys) == [f"dagster/{killed_id}/big_orders/0/{sha}/step-{i}" for i in range(3)]  # each step once
    monkeypatch.setenv("DAGSTER_HOME", env["DAGSTER_HOME"])
    m = latest(DagsterInstance.get(), BIG_ORDERS)
    assert m.metadata[md.RUN_KEY].value == f"dagster/{killed_id}/big_orders"  # the root run's, not the re-run's
    rows = sorted(
        r["o_orderkey"] for r in lake_catalog(tmp_path).load_table("demo.big_orders").scan().to_arrow().to_pylist()
    )
    db = DuckDBOracle(tpch_dir, ["orders"])
    try:
        expected = sorted(
            r[0] for r in db.run("select o_orderkey from orders where o_totalprice between 350000 and 450000").rows
        )
    finally:
        db.close()
    assert rows == expected and m.metadata[md.ROW_COUNT].value == len(expected)  # no order twice


# --- checks ----------------------------------------------------------------------------------------------------


def test_schema_check_compares_the_plan_with_the_table_it_reads(tpch_dir, tmp_path, lake):
    from substrait_spark.dagster import IcebergCatalogsResource
    from substrait_spark.dagster.checks import substrait_asset_checks

    plan = str(PLANS / "big_orders_pipeline.json")
    resource = SubstraitSparkResource(tables_dir=str(tpch_dir))
    [checks] = substrait_asset_checks(plan, resource=resource)
    [ok] = list(checks())
    assert ok.passed and ok.asset_key == ORDERS and ok.metadata["problems"].value == []
    # IBM's q1 names lineitem's columns in upper case, as varchar/fixedchar/decimal: the parquet files fit it.
    [checks] = substrait_asset_checks(str(PLANS / "daily_pricing_summary.json"), resource=resource)
    [ok] = list(checks())
    assert ok.passed and ok.asset_key == LINEITEM and "L_QUANTITY" in ok.metadata["plan_columns"].value

    # The same name bound to a table without the plan's columns: the check fails and names them.
    other = SubstraitSparkResource(tables={"orders": str(tpch_dir / "nation.parquet")})
    [checks] = substrait_asset_checks(plan, resource=other)
    [bad] = list(checks())
    assert not bad.passed and bad.metadata["problems"].value == [
        "column 'o_orderkey' missing",
        "column 'o_custkey' missing",
        "column 'o_totalprice' missing",
    ]

    # A catalog table must match exactly: o_totalprice as a double is what a run would refuse (exit 4).
    import pyarrow as pa

    ns = "dagster_checks"
    lake.catalog.create_namespace_if_not_exists(ns)
    if lake.catalog.table_exists(f"{ns}.orders"):
        lake.catalog.drop_table(f"{ns}.orders")
    fields = [("o_orderkey", pa.int64()), ("o_custkey", pa.int64()), ("o_totalprice", pa.float64())]
    lake.catalog.create_table(f"{ns}.orders", schema=pa.schema(fields))
    config = lake.write_config(tmp_path / "catalogs.yaml")
    in_lake = SubstraitSparkResource(catalogs=IcebergCatalogsResource(config_path=str(config)))
    from google.protobuf import json_format
    from plan_builder import PlanBuilder, decimal_, i64, named

    read = named([ns, "orders"], [f for f, _ in fields], [i64(), i64(), decimal_(15, 2)])
    path = tmp_path / "read.json"
    path.write_text(json_format.MessageToJson(PlanBuilder().plan(read, [f for f, _ in fields])))
    [checks] = substrait_asset_checks(str(path), resource=in_lake)
    [typed] = list(checks())
    assert typed.asset_key == AssetKey(["lake", ns, "orders"]) and not typed.passed
    assert typed.metadata["problems"].value == ["column 'o_totalprice' is double, plan says decimal(15,2)"]


def test_two_plans_reading_the_same_tables_each_check_them_under_their_own_name(spark, shop_dir, shop_plans):
    """Issue 28 item 6: two plans reading products and order_items, each with its schema checks: the definitions
    load (no duplicate check key), each table has one check per plan, named after the plan, and all of them run."""
    from dagster import AssetCheckKey, AssetSelection, Definitions
    from substrait_spark.dagster import substrait_asset_checks

    resource = SubstraitSparkResource(tables_dir=str(shop_dir))
    plans = {name: str(shop_plans[name].plan) for name in ("top_products", "category_share")}
    assets = [substrait_assets(uri, resource=resource, root_asset=[name]) for name, uri in plans.items()]
    checks = [c for uri in plans.values() for c in substrait_asset_checks(uri, resource=resource)]
    defs = Definitions(assets=assets, asset_checks=checks, resources={"substrait": resource})
    schema_checks = {
        AssetCheckKey(AssetKey([table]), f"shop_{name}_schema_matches")  # the op name: the plan file's stem
        for table in ("products", "order_items")
        for name in plans
    }
    graph = defs.resolve_asset_graph()
    assert set(graph.asset_check_keys) == schema_checks | {AssetCheckKey(AssetKey([n]), "plan_valid") for n in plans}

    result = materialize(
        [*assets, *checks],
        resources={"substrait": resource},
        selection=AssetSelection.all() | AssetSelection.all_asset_checks(),
    )
    assert result.success
    ran = {AssetCheckKey(e.asset_key, e.check_name): e.passed for e in result.get_asset_check_evaluations()}
    assert {k: ran.get(k) for k in schema_checks} == dict.fromkeys(schema_checks, True)
    for name in plans:
        [m] = result.asset_materializations_for_node(f"shop_{name}")
        assert m.asset_key == AssetKey([name]) and m.metadata[md.ROW_COUNT].value > 0


# --- the dg component ----------------------------------------------------------------------------------------------

PROJECT = ROOT / "dags_examples" / "dagster" / "substrait_project"


def dg(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "dg"), *args], cwd=PROJECT, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def component_env(tmp: Path, tpch_dir: Path) -> dict[str, str]:
    """The example project's environment: this interpreter's venv active, a lake of the test's own."""
    import runpy

    env = example_env(tmp, tpch_dir)
    config = runpy.run_path(str(DEFINITIONS))["lake_config"](tmp / "lake")  # the example's lake, made here
    env.update(
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(BIN.parent),
        SUBSTRAIT_CATALOG_CONFIG=config,
        PYTHONPATH=str(PROJECT / "src"),
    )
    return env


def test_dg_lists_the_component_and_checks_the_example_project(tmp_path, tpch_dir):
    env = component_env(tmp_path, tpch_dir)
    listed = dg("list", "components", env=env)
    assert listed.returncode == 0, listed.stderr[-3000:]
    assert "substrait_spark.dagster.SubstraitPlansComponent" in listed.stdout

    checked = dg("check", "defs", "--use-active-venv", env=env)
    assert checked.returncode == 0, (checked.stdout + checked.stderr)[-3000:]
    assert "All definitions loaded successfully" in checked.stdout + checked.stderr

    # The component's assets are the Python example's: the same keys from the same plans.
    defs = dg("list", "defs", env={**env, "COLUMNS": "400"})
    assert defs.returncode == 0, defs.stderr[-3000:]
    for key in ("lake/demo/big_orders", "reports/pricing_summary", "orders", "lineitem"):
        assert f" {key} " in defs.stdout

    # A project whose tables directory is missing fails the check, saying so (not a traceback-only failure).
    broken = dg("check", "defs", "--use-active-venv", env={**env, "SUBSTRAIT_TABLES_DIR": str(tmp_path / "none")})
    assert broken.returncode != 0 and "tables directory not found" in broken.stdout + broken.stderr


# --- Spark Connect -------------------------------------------------------------------------------------------------

ON_CONNECT = """
import json, sys
from dagster import DailyPartitionsDefinition, materialize
from substrait_spark.dagster import SparkResource, SubstraitSparkResource, substrait_assets

url, plan, tables_dir, out, day = sys.argv[1:]
resource = SubstraitSparkResource(spark=SparkResource(master=url), tables_dir=tables_dir)
assets = substrait_assets(
    plan, resource=resource, partitions_def=DailyPartitionsDefinition(start_date="1992-01-01"),
    partition_parameter=0, results={"path": out, "format": "parquet"}, root_asset=["reports", "pricing_summary"],
)
result = materialize([assets], partition_key=day, resources={"substrait": resource})
[m] = result.asset_materializations_for_node(assets.op.name)
from pyspark import SparkContext
print(json.dumps({"success": result.success, "rows": m.metadata["dagster/row_count"].value,
                  "jvm": SparkContext._active_spark_context is not None}))
"""


def test_the_spark_resource_runs_assets_over_spark_connect(connect_url, tpch_dir, tmp_path):
    """A worker without a JVM: the resource's `sc://` session (3.5 client, 4.x server) runs the plan."""
    import json

    out = tmp_path / "connect-report"
    args = [connect_url, str(PLANS / "daily_pricing_summary.json"), str(tpch_dir), str(out), DAY]
    done = subprocess.run(
        [sys.executable, "-c", ON_CONNECT, *args], capture_output=True, text=True, timeout=600, env=dict(os.environ)
    )
    assert done.returncode == 0, done.stderr[-5000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    table = ds.dataset(str(out), format="parquet").to_table()
    rows = [tuple(r.values()) for r in table.to_pylist()]
    assert got == {"success": True, "rows": len(rows), "jvm": False}
    assert_same_result(rows, tpch_q01_until(tpch_dir, DAY).rows, context="over Spark Connect")


# --- Dagster Pipes -------------------------------------------------------------------------------------------------


NO_DAGSTER = """
import importlib.abc, sys

class NoDagster(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "dagster" or name.startswith("dagster."):
            raise ImportError(f"the Pipes driver imported {name}: it must need only dagster_pipes")
        return None

sys.meta_path.insert(0, NoDagster())
"""


def test_a_pipes_run_through_spark_submit_reports_the_same_materialization(tmp_path, tpch_dir):
    """The plan runs in a spark-submit driver (engine and dagster-pipes only); this process starts no Spark."""
    import runpy

    from substrait_spark.dagster import IcebergCatalogsResource, SparkResource, SparkSubmitPipes

    config = runpy.run_path(str(DEFINITIONS))["lake_config"](tmp_path / "lake")
    resource = SubstraitSparkResource(
        spark=SparkResource(master="local[2]", conf={"spark.sql.shuffle.partitions": "4"}),
        catalogs=IcebergCatalogsResource(config_path=config),
        tables_dir=str(tpch_dir),
    )
    # The driver may import the engine and dagster_pipes, not Dagster: a sitecustomize refuses `dagster` there.
    blocker = tmp_path / "no_dagster"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(NO_DAGSTER)
    remote = SparkSubmitPipes(env={"PYTHONPATH": str(blocker)})
    assets = substrait_assets(str(PLANS / "big_orders_pipeline.json"), resource=resource, remote=remote)
    result = materialize([assets], resources={"substrait": resource})
    assert result.success
    [m] = result.asset_materializations_for_node(assets.op.name)
    assert m.asset_key == BIG_ORDERS
    assert_big_orders(m, tmp_path, tpch_dir)
    assert m.metadata[md.RUN_KEY].value == f"dagster/{result.run_id}/big_orders_pipeline"


# --- dagster dev in headless Chromium -----------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = ROOT / ".data" / "artifacts"


@pytest.fixture
def dagster_dev(tmp_path, tpch_dir):
    """`dagster dev` on the example definitions, on 127.0.0.1 and a free port, with signals reset (started from a
    non-interactive shell it would ignore SIGTERM); stopped by its PID."""
    port = free_port()
    cmd = [str(BIN / "dagster"), "dev", "-f", str(DEFINITIONS), "-h", "127.0.0.1", "-p", str(port)]
    base = f"http://127.0.0.1:{port}"
    env = example_env(tmp_path, tpch_dir)
    try:
        with serving(cmd, f"{base}/server_info", tmp_path / "dagster-dev.log", env=env, cwd=tmp_path, timeout=180):
            yield base
    except ServerDidNotStart as exc:
        pytest.fail(str(exc))


@pytest.mark.browser
def test_dagster_dev_shows_the_plans_asset_graph_in_chromium(dagster_dev):
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: `make browser` installs Debian's chromium")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "dagster_asset_graph.png"
    with playwright.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu", "--no-first-run"]
        )
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.goto(f"{dagster_dev}/locations/definitions.py/asset-groups/substrait_examples/lineage")
            boxes = {}
            for name in ("orders", "big_orders", "lineitem", "pricing_summary"):
                label = page.get_by_text(name, exact=True).first
                label.wait_for(timeout=60_000)
                boxes[name] = label.bounding_box()
            # The plans' dependencies as the graph lays them out: each read table left of, level with, its asset.
            for upstream, asset in (("orders", "big_orders"), ("lineitem", "pricing_summary")):
                up, down = boxes[upstream], boxes[asset]
                assert up["x"] + up["width"] < down["x"] and abs(up["y"] - down["y"]) < 5, boxes
            body = page.inner_text("body")
            assert "Iceberg" in body and "Parquet" in body  # the assets' kinds
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    print(f"\nscreenshot of the asset graph: {shot}")
    assert shot.stat().st_size > 10_000


# --- assets of two plans link up ----------------------------------------------------------------------------------


def test_a_plan_reading_anothers_table_depends_on_its_asset_with_the_catalogs_spelling(lake, tpch_dir, tmp_path):
    """Plan A copies TPC-H orders into an Iceberg table; plan B reads that table, naming it and its columns in upper
    case. B's asset depends on A's (one key scheme), and B's column lineage names A's key and the columns as the
    catalog spells them."""
    from google.protobuf import json_format
    from plan_builder import PlanBuilder, WriteRel, decimal_, field, i64, named, project, write

    ns = "dagster_link"
    lake.catalog.create_namespace_if_not_exists(ns)
    names, types = ["o_orderkey", "o_totalprice"], [i64(), decimal_(15, 2)]
    source = named("orders", ["o_orderkey", "o_custkey", "o_totalprice"], [i64(), i64(), decimal_(15, 2)])
    copy = write(
        [ns, "orders_copy"],
        project(source, field(0), field(2), emit=[3, 4]),
        names,
        types,
        op=WriteRel.WRITE_OP_CTAS,
        create_mode=WriteRel.CREATE_MODE_REPLACE_IF_EXISTS,
    )
    upper = named([ns.upper(), "ORDERS_COPY"], ["O_ORDERKEY", "O_TOTALPRICE"], types)
    totals = write(
        [ns, "order_totals"],
        upper,
        ["KEY", "PRICE"],
        types,
        op=WriteRel.WRITE_OP_CTAS,
        create_mode=WriteRel.CREATE_MODE_REPLACE_IF_EXISTS,
    )
    paths = {}
    for name, rel, cols in (("copy", copy, names), ("totals", totals, ["KEY", "PRICE"])):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json_format.MessageToJson(PlanBuilder().plan(rel, cols)))

    from substrait_spark.dagster import IcebergCatalogsResource

    config = lake.write_config(tmp_path / "catalogs.yaml")
    resource = SubstraitSparkResource(
        catalogs=IcebergCatalogsResource(config_path=str(config)), tables_dir=str(tpch_dir)
    )
    a = substrait_assets(str(paths["copy"]), resource=resource)
    b = substrait_assets(str(paths["totals"]), resource=resource)
    copy_key, totals_key = AssetKey(["lake", ns, "orders_copy"]), AssetKey(["lake", ns, "order_totals"])
    assert a.keys == {copy_key} and b.keys == {totals_key}
    assert b.asset_deps[totals_key] == {copy_key}  # known from the plans, before either ran

    result = materialize([a, b], resources={"substrait": resource})
    assert result.success
    [m] = result.asset_materializations_for_node(b.op.name)
    spelled = [f.name for f in lake.catalog.load_table(f"{ns}.orders_copy").schema().fields]
    assert spelled == ["o_orderkey", "o_totalprice"]
    assert lineage_deps(m) == [(copy_key, "o_orderkey"), (copy_key, "o_totalprice")]
    written = lake.catalog.load_table(f"{ns}.order_totals")
    assert m.metadata[md.ROW_COUNT].value == written.scan().to_arrow().num_rows == orders_count(tpch_dir, "true")


# --- the plan store over dagster-aws's S3Resource ----------------------------------------------------------------


def test_plans_from_s3_through_the_s3_resource_with_the_sha256_pin(s3_endpoint, tmp_path, tpch_dir):
    """The plan is read from a real S3-compatible server through dagster-aws's S3Resource client (its endpoint and
    credentials, not boto3's environment); a pinned digest refuses changed bytes when the definitions load."""
    import hashlib

    from dagster_aws.s3 import S3Resource
    from s3_server import CREDENTIALS, REGION, new_bucket, s3_client
    from substrait_spark.consumer.errors import PolicyError
    from substrait_spark.dagster import PlanStoreResource

    client = s3_client(s3_endpoint)
    bucket = new_bucket(client, versioned=True)
    body = (PLANS / "big_orders_pipeline.json").read_bytes()
    version = client.put_object(Bucket=bucket, Key="big_orders.json", Body=body)["VersionId"]
    s3 = S3Resource(endpoint_url=s3_endpoint, region_name=REGION, **CREDENTIALS)
    resource = SubstraitSparkResource(plan_store=PlanStoreResource(s3=s3), tables_dir=str(tpch_dir))
    uri = f"s3://{bucket}/big_orders.json"
    read = resource.plan_store.read(f"{uri}?versionId={version}", hashlib.sha256(body).hexdigest())
    assert read.data == body and read.version_id == version

    digest = hashlib.sha256(body).hexdigest()
    assets = substrait_assets(uri, resource=resource, expected_sha256=digest)
    assert assets.keys == {AssetKey(["demo", "big_orders"])}  # no catalogs configured: the plan's own name
    assert assets.specs_by_key[AssetKey(["demo", "big_orders"])].metadata[md.PLAN_SHA256] == digest

    client.put_object(Bucket=bucket, Key="big_orders.json", Body=body + b"\n")  # the plan changed under the pin
    with pytest.raises(PolicyError, match="changed"):
        substrait_assets(uri, resource=resource, expected_sha256=digest)
