"""End to end with real Airflow: `airflow dags test` (SQLite metadata) runs the operator, plans come from a real
S3-compatible server on 127.0.0.1 (moto's server mode), and Spark runs the plans. Connections exist only as
`AIRFLOW_CONN_*` environment variables (tools/local_stack.py sets them, as a deployment would).

Covered: the example daily DAG (logical date rendered into the plan's dynamic parameter, result published and
checked against DuckDB), the multi-plan example pipeline, failures with their typed messages (missing table,
missing object, changed plan refused by `expected_sha256`, a parameter that is not a date), and `on_kill`
cancelling a running Spark job when the task is terminated.
"""

from __future__ import annotations

import hashlib
import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from google.protobuf import json_format
from local_stack import PLANS_BUCKET, AirflowStack, s3_client, seed_plans
from oracles import DuckDBOracle, assert_same_result, tpch_q01_until
from plan_builder import PlanBuilder, aggregate, cross, i32, i64, named, project, string

pytestmark = [pytest.mark.spark, pytest.mark.iceberg, pytest.mark.airflow, pytest.mark.corpus]

TESTS = Path(__file__).resolve().parent
DAY = "1995-06-17"
OTHER_DAY = "1993-03-01"  # the day tests/test_airflow_e2e_stores.py runs the daily DAG on


@pytest.fixture(scope="module")
def plan_versions(s3_endpoint, corpus):
    return seed_plans(s3_endpoint, corpus)


@pytest.fixture(scope="module")
def examples(tmp_path_factory, s3_endpoint, tpch_dir, plan_versions) -> AirflowStack:
    """Airflow over dags_examples/ (what `make demo` runs)."""
    home = tmp_path_factory.mktemp("airflow-examples")
    stack = AirflowStack(home, s3_endpoint, tpch_dir, home / "reports")
    stack.migrate()
    stack.ensure_lake()
    return stack


@pytest.fixture(scope="module")
def test_dags(tmp_path_factory, s3_endpoint, tpch_dir, plan_versions) -> AirflowStack:
    """Airflow over tests/airflow_dags/ (DAGs that must fail or be killed)."""
    home = tmp_path_factory.mktemp("airflow-tests")
    stack = AirflowStack(home, s3_endpoint, tpch_dir, home / "reports", dags=TESTS / "airflow_dags")
    stack.migrate()
    return stack


def _put_plan(endpoint: str, key: str, plan) -> bytes:
    body = json_format.MessageToJson(plan).encode()
    s3_client(endpoint).put_object(Bucket=PLANS_BUCKET, Key=key, Body=body)
    return body


def _published_rows(spark, location: str):
    return [tuple(r) for r in spark.read.parquet(location).collect()]


# --- the example DAGs ------------------------------------------------------------------------------------


def test_daily_report_binds_the_logical_date_and_publishes(examples, plan_versions, tpch_dir, spark, tmp_path):
    """(tests/test_airflow_e2e_stores.py runs the same DAG on another day, its plan in GCS and Azure.)"""
    day = DAY
    audit_log = tmp_path / "audit.jsonl"
    run = examples.dags_test("substrait_daily_report", day, AIRFLOW_VAR_SUBSTRAIT_AUDIT_LOG=f"jsonl:{audit_log}")
    assert run.state == "success", run.log[-5000:]
    report = run.value("pricing_summary")
    assert report["status"] == "success"
    # What ran is recorded: $0 bound to the logical date, as the plan's date, in the XCom report and the audit.
    bound = [{"anchor": 0, "type": "date", "value": day, "source": "caller"}]
    assert report["parameters"] == bound
    [record] = [json.loads(line) for line in audit_log.read_text().splitlines()]
    assert record["task_id"] == "pricing_summary" and record["status"] == "success"
    assert [{**p, "value": json.loads(p["value"])} for p in record["parameters"]] == bound
    assert report["plan_uri"] == f"s3://{PLANS_BUCKET}/tpch/daily_pricing_summary.json"
    assert report["plan_version_id"] == plan_versions["tpch/daily_pricing_summary.json"]
    assert report["plan_etag"] and len(report["plan_sha256"]) == 64
    assert report["spark_application_id"].startswith("local-")
    assert [t["name"].lower() for t in report["tables_read"]] == ["lineitem"]
    out = report["outputs"][0]
    assert out["location"].endswith(f"pricing_summary/ds={day}") and out["format"] == "parquet"
    # The published result is TPC-H q1 with the logical date as cut-off, row for row.
    expected = tpch_q01_until(tpch_dir, day)
    rows = _published_rows(spark, out["location"])
    assert out["rows"] == len(rows) == len(expected.rows)
    assert_same_result(rows, expected.rows, context=f"daily report {day}")
    assert run.value("publish") == out["location"]
    assert run.value("pricing_summary", "substrait_plan_link").startswith(examples.s3_endpoint)
    # The task log says what the run did, a line per part (`narration.report_lines`).
    plan = f"Plan {report['plan_uri']}: sha256 {report['plan_sha256'][:12]}, version {report['plan_version_id']}"
    assert plan in run.log
    assert f"Read table {report['tables_read'][0]['name']} = {report['tables_read'][0]['identity']}" in run.log
    assert f"Parameter $0 (date) = '{day}' from the caller" in run.log
    assert f"Root 0: {out['rows']} rows, columns " in run.log and f"-> {out['location']} (parquet)" in run.log
    assert re.search(rf"Run success in [\d.]+ s on local-\S+: {out['rows']} rows from 1 root\(s\)", run.log)


def test_pipeline_runs_plans_of_three_producers(examples, plan_versions):
    run = examples.dags_test("substrait_tpch_pipeline", "2024-06-01")
    assert run.state == "success", run.log[-5000:]
    reports = [run.value("run_plan", map_index=i) for i in range(3)]
    producers = [r["producer"] for r in reports]
    assert producers[0].lower().startswith("isthmus") or "isthmus" in producers[0].lower()
    assert "duckdb" in producers[1].lower() and "ibis" in producers[2].lower()
    rows = [r["outputs"][0]["rows"] for r in reports]
    assert rows == [10, 1, 20]  # q03 LIMIT 10, q06 one sum, q10 LIMIT 20
    assert all(len(r["outputs"][0]["preview"]) == min(3, n) for r, n in zip(reports, rows, strict=True))
    summary = run.value("summarise")
    assert [s["rows"] for s in summary] == rows


def test_table_pipeline_reports_its_steps_and_one_asset_event_per_table(examples, tpch_dir):
    from substrait_spark.hooks.iceberg_spark import pyiceberg_catalog

    run = examples.dags_test("substrait_table_pipeline", "2024-06-01")
    assert run.state == "success", run.log[-5000:]
    report = run.value("big_orders")
    db = DuckDBOracle(tpch_dir, ["orders"])
    try:
        count = lambda where: db.run(f"select count(*) from orders where {where}").rows[0][0]  # noqa: E731
        expected_rows = [
            count("o_totalprice > 400000"),
            count("o_totalprice between 350000 and 400000"),
            count("o_totalprice > 450000"),
        ]
        expected_keys = sorted(
            r[0]
            for r in db.run(
                "select o_orderkey from orders where o_totalprice >= 350000 and o_totalprice <= 450000"
            ).rows
        )
    finally:
        db.close()
    steps = report["steps"]
    assert [(s["kind"], s["status"], s["rows"]) for s in steps] == list(
        zip(["ctas", "insert", "delete"], ["committed"] * 3, expected_rows, strict=True)
    )
    assert {s["target"] for s in steps} == {"lake.demo.big_orders"}
    assert steps[1]["snapshot_before"] == steps[0]["snapshot_after"]
    key = f"substrait_table_pipeline/{run.run_id}/big_orders/-1"
    sha = report["plan_sha256"][:12]
    assert [s["idempotency_key"] for s in steps] == [f"{key}/0/{sha}/step-{i}" for i in range(3)]
    # The table, read through pyiceberg: what the three steps leave.
    settings = {"uri": examples.home / "lake" / "catalog.db", "warehouse": examples.home / "lake" / "warehouse"}
    table = pyiceberg_catalog("lake", **settings).load_table("demo.big_orders")
    assert sorted(r["o_orderkey"] for r in table.scan().to_arrow().to_pylist()) == expected_keys
    # One Asset event for the one table changed, with the figures in its extra.
    assert run.asset_events == [
        (
            "lake.demo.big_orders",
            "iceberg://lake/demo/big_orders",
            {
                "rows_changed": sum(expected_rows),
                "snapshot_id": table.current_snapshot().snapshot_id,
                "plan_sha256": report["plan_sha256"],
                "steps": [{"kind": s["kind"], "rows": s["rows"], "snapshot_id": s["snapshot_after"]} for s in steps],
            },
        )
    ]
    # One audit record for the task's one try, in the catalog's default audit table.
    audit = pyiceberg_catalog("lake", **settings).load_table("substrait_spark.audit_log").scan().to_arrow()
    records = [r for r in audit.to_pylist() if r["run_id"] == run.run_id and r["task_id"] == "big_orders"]
    assert [(r["record_id"], r["dag_id"], r["try_number"], r["status"]) for r in records] == [
        (f"{key}/try-1", "substrait_table_pipeline", 1, "success")
    ]
    assert [(s["kind"], s["rows"], s["snapshot_after"]) for s in records[0]["steps"]] == [
        (s["kind"], s["rows"], s["snapshot_after"]) for s in steps
    ]


# --- failures --------------------------------------------------------------------------------------------


def test_failing_tasks_fail_with_the_typed_error(test_dags, s3_endpoint, corpus):
    b = PlanBuilder()
    _put_plan(s3_endpoint, "failures/unknown_table.json", b.plan(named("no_such_table", ["x"], [i32()]), ["x"]))
    original = (corpus / "ibm-substrait-compliance-tpch" / "q06.json").read_bytes()
    client = s3_client(s3_endpoint)
    client.put_object(Bucket=PLANS_BUCKET, Key="failures/pinned.json", Body=original)
    client.put_object(
        Bucket=PLANS_BUCKET, Key="failures/pinned.json", Body=b"// edited after it was pinned\n" + original
    )
    pinned = hashlib.sha256(original).hexdigest()

    _put_plan(s3_endpoint, "failures/unsupported.json", _unsupported_plan())
    _put_plan(s3_endpoint, "failures/narrow_quantity.json", _narrow_quantity_plan())
    _put_plan(s3_endpoint, "failures/unbound_parameter.json", _unbound_parameter_plan())

    run = test_dags.dags_test("substrait_test_failures", "2024-06-01", AIRFLOW_VAR_PINNED_SHA256=pinned)
    assert run.state == "failed"
    failing = (
        "missing_table",
        "missing_object",
        "changed_plan",
        "bad_parameter",
        "unbound_parameter",
        "unsupported_plan",
        "lossy_cast",
    )
    states = {t: run.state_of(t) for t in failing}
    assert set(states.values()) == {"failed"}, states
    log = run.log
    assert "resolution failed: table 'no_such_table' not found" in log
    assert f"plan not found: s3://{PLANS_BUCKET}/failures/no_such_plan.json: no key" in log
    assert "plan not found: plan not found" not in log  # the kind once (issue 28 item 12)
    assert "refused by policy" in log or "plan changed" in log
    assert pinned[:12] in log
    assert "value 'not-a-date' is not a valid date" in log
    # An unbound parameter says how a DAG author binds it, not the CLI's way (issue 28 item 12).
    assert 'dynamic parameter $0 has no value: bind it with the operator\'s parameters={"0": VALUE}' in log
    assert "--param" not in log
    # Failed tries still leave their run report for the one that failed after loading the plan.
    report = run.value("missing_table", "substrait_run_report")
    assert report["status"] == "failed" and report["error"]["exit_code"] == 4
    # An unsupported plan fails before the task asks for a Spark session: its report has no Spark application.
    report = run.value("unsupported_plan", "substrait_run_report")
    assert report["error"]["exit_code"] == 3 and report["spark_application_id"] is None
    assert f"unsupported: extension relation {EMPTY_URL}" in log
    # A lossy cast from the data to the plan's types fails (exit 4, both types named) unless the task opts in; the
    # table check finds it in the parquet footer before the task asks for a Spark session (issue 28 item 9).
    report = run.value("lossy_cast", "substrait_run_report")
    assert report["error"]["exit_code"] == 4 and report["spark_application_id"] is None
    assert "column 'l_quantity' is decimal(15,2), plan says decimal(2,0) (a cast would lose information)" in log
    assert run.state_of("lossy_cast_allowed") == "success"
    allowed = run.value("lossy_cast_allowed")
    assert allowed["outputs"][0]["rows"] == 1
    assert [n for n in allowed["notes"] if n.startswith("lossy cast")] == [
        "lossy cast (cast_to_plan_types): table 'lineitem', column 'l_quantity': decimal(15,2) -> decimal(2,0) "
        "(at relations[0].root.input.aggregate.input.read.named_table)"
    ]


EMPTY_URL = "type.googleapis.com/google.protobuf.Empty"  # an extension relation no consumer class registers


def _unsupported_plan():
    from substrait import algebra_pb2 as alg

    rel = alg.Rel()
    rel.extension_leaf.detail.type_url = EMPTY_URL
    return PlanBuilder().plan(rel, ["x"])


def _unbound_parameter_plan():
    """count(*) FROM lineitem WHERE l_shipdate = $0, $0 with no binding in the plan."""
    from plan_builder import date, field, filter_, param

    b = PlanBuilder()
    li = named("lineitem", ["l_orderkey", "l_shipdate"], [i64(), date()])
    rel = filter_(li, b.call("equal", field(1), param(0, date())))
    return b.plan(aggregate(rel, measures=[b.agg("count", out=i64(nullable=False))]), ["n"])


def _narrow_quantity_plan():
    """count(*) FROM lineitem, declaring l_quantity (decimal(15,2), values 1-50) as decimal(2,0)."""
    from plan_builder import decimal_

    b = PlanBuilder()
    li = named("lineitem", ["l_orderkey", "l_quantity"], [i64(), decimal_(2, 0)])
    return b.plan(aggregate(li, measures=[b.agg("count", out=i64(nullable=False))]), ["n"])


def _slow_plan():
    """count(*) over lineitem x lineitem x nation: ~9e10 row combinations, many minutes of work at sf 0.01."""
    b = PlanBuilder()
    li = named("lineitem", ["l_orderkey"], [i64()])
    rel = cross(cross(li, named("lineitem", ["l_orderkey"], [i64()])), named("nation", ["n_nationkey"], [i64()]))
    rel = aggregate(project(rel, emit=[0]), measures=[b.agg("count", out=i64(nullable=False))])
    return b.plan(rel, ["n"])


def test_on_kill_cancels_the_running_spark_job(test_dags, s3_endpoint):
    _put_plan(s3_endpoint, "failures/slow.json", _slow_plan())
    exe = Path(sys.executable).parent / "airflow"
    proc = subprocess.Popen(
        [str(exe), "dags", "test", "substrait_test_kill", "2024-06-01"],
        env=test_dags.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    assert proc.stdout is not None
    started = None
    deadline = time.monotonic() + 300
    for line in proc.stdout:
        lines.append(line)
        if "Running the plan in Spark job group" in line:
            started = time.monotonic()
            break
        assert time.monotonic() < deadline, "".join(lines[-50:])
    assert started is not None, "".join(lines[-80:])
    time.sleep(5)  # translation, then the plan's Spark job starts
    proc.send_signal(signal.SIGTERM)
    try:
        rest, _ = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    elapsed = time.monotonic() - started
    log = "".join(lines) + rest
    assert "Cancelling Spark job group substrait:substrait_test_kill:slow_plan:" in log, log[-5000:]
    assert "cancelled" in log.lower(), log[-6000:]
    assert elapsed < 90, f"the task took {elapsed:.0f} s to stop after SIGTERM"
    run = test_dags.last_run("substrait_test_kill")
    assert run.state_of("slow_plan") == "failed"


# The `airflow providers` commands a user runs to see what a provider registered, run in one interpreter (each
# `airflow` process spends seconds importing Airflow): the CLI's own parser and commands, output split by markers.
PROVIDER_COMMANDS = ("list", "hooks", "behaviours", "widgets", "links")
_PROVIDER_CLI = """
import sys
from airflow.cli import cli_parser
parser = cli_parser.get_parser()
for command in sys.argv[1:]:
    print(f"==> {command}", flush=True)
    args = parser.parse_args(["providers", command, "--output", "json"])
    args.func(args)
    sys.stdout.flush()
"""


def airflow_providers(stack: AirflowStack) -> dict[str, str]:
    """Each `airflow providers <command> --output json`'s output, by command."""
    done = subprocess.run(
        [sys.executable, "-c", _PROVIDER_CLI, *PROVIDER_COMMANDS],
        env=stack.env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    parts = re.split(r"^==> (\w+)$", done.stdout, flags=re.MULTILINE)[1:]
    return dict(zip(parts[::2], parts[1::2], strict=True))


def test_provider_is_listed_with_its_connection_form(examples):
    out = airflow_providers(examples)
    providers = {p["package_name"]: p for p in json.loads(out["list"])}
    assert "substrait-spark" in providers
    ours = [h for h in json.loads(out["hooks"]) if h["connection_type"] == "substrait_spark"]
    assert ours == [
        {
            "connection_type": "substrait_spark",
            "class": "substrait_spark.hooks.spark_hook.SubstraitSparkHook",
            "conn_id_attribute_name": "spark_conn_id",
            "package_name": "substrait-spark",
            "hook_name": "Substrait on Spark",
        }
    ]
    assert {"field_behaviours": "substrait_spark"} in json.loads(out["behaviours"])
    fields = {
        w["connection_parameter_name"] for w in json.loads(out["widgets"]) if w["package_name"] == "substrait-spark"
    }
    fields_expected = ("conf", "jars", "packages", "connect_timeout", "policy", "tables")
    assert fields == {f"extra__substrait_spark__{f}" for f in fields_expected}
    links = [x["extra_link_class_name"] for x in json.loads(out["links"])]
    assert "substrait_spark.operators.links.SubstraitPlanLink" in links


# --- Iceberg: the operator and the CLI through one catalog configuration ----------------------------------------


def test_operator_and_cli_resolve_through_the_same_catalog_config(test_dags, s3_endpoint, lake, tmp_path, capsys):
    import pyarrow as pa
    from substrait_spark.cli import main

    schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
    lake.catalog.create_namespace_if_not_exists("airflow_e2e")
    table = lake.catalog.create_table("airflow_e2e.customers", schema=schema)
    table.append(pa.Table.from_pylist([{"id": i, "name": f"c{i}"} for i in range(6)], schema=schema))
    snapshot = lake.catalog.load_table("airflow_e2e.customers").current_snapshot().snapshot_id
    config = lake.write_config(tmp_path / "catalogs.yaml")
    plan = PlanBuilder().plan(
        project(named(["AIRFLOW_E2E", "CUSTOMERS"], ["id", "name"], [i64(), string()]), emit=[0, 1]), ["id", "name"]
    )
    body = _put_plan(s3_endpoint, "iceberg/read.json", plan)

    run = test_dags.dags_test("substrait_test_iceberg", "2024-06-01", AIRFLOW_VAR_CATALOG_CONFIG=str(config))
    assert run.state == "success", run.log[-5000:]
    report = run.value("iceberg_read")
    assert report["tables_read"] == [
        {
            "name": "AIRFLOW_E2E.CUSTOMERS",
            "identity": f"{lake.name}.airflow_e2e.customers",
            "format": "iceberg",
            "snapshot_id": snapshot,
            "catalog": lake.name,
            "metadata_location": lake.catalog.load_table("airflow_e2e.customers").metadata_location,
        }
    ]
    assert sorted(map(tuple, report["outputs"][0]["preview"])) == [(i, f"c{i}") for i in range(6)]

    plan_file = tmp_path / "read.json"
    plan_file.write_bytes(body)
    out = tmp_path / "out"
    assert main(["run", str(plan_file), "--catalog-config", str(config), "--output-dir", str(out)]) == 0
    cli_report = json.loads((out / "summary.json").read_text())["plans"][0]
    assert cli_report["tables_read"] == report["tables_read"]
    assert cli_report["outputs"][0]["rows"] == 6


def test_an_iceberg_connection_to_a_rest_catalog_with_oauth2_reads_and_audits(
    test_dags, s3_endpoint, rest_catalog_server
):
    """Issue 32: the Iceberg provider's `iceberg` connection (host, client id and secret, `warehouse` extra) points the
    operator at the REST catalog server; the plan's table resolves through it with its snapshot, and the run's audit
    row is written to the same catalog."""
    import pyarrow as pa
    from substrait_spark.hooks.iceberg import Catalogs

    server, name = rest_catalog_server, "airflowrest"
    catalog = Catalogs.from_mapping({"catalogs": {name: server.properties(name)}}).load(name)
    schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
    catalog.create_namespace_if_not_exists("airflow_e2e")
    table = catalog.create_table("airflow_e2e.rest_orders", schema=schema)
    table.append(pa.Table.from_pylist([{"id": i, "name": f"o{i}"} for i in range(4)], schema=schema))
    snapshot = catalog.load_table("airflow_e2e.rest_orders").current_snapshot().snapshot_id
    _put_plan(
        s3_endpoint,
        "iceberg/rest_read.json",
        PlanBuilder().plan(
            project(named(["airflow_e2e", "rest_orders"], ["id", "name"], [i64(), string()]), emit=[0, 1]),
            ["id", "name"],
        ),
    )
    host, port = server.uri.rsplit(":", 1)
    connection = {
        "conn_type": "iceberg",
        "host": host,
        "port": int(port),
        "login": server.client_id,
        "password": server.client_secret,
        "extra": {"catalog_name": name, "warehouse": name, "oauth2-server-uri": f"{server.uri}/v1/oauth/tokens"},
    }
    run = test_dags.dags_test(
        "substrait_test_iceberg_rest", "2024-06-04", AIRFLOW_CONN_LAKE_REST=json.dumps(connection)
    )
    assert run.state == "success", run.log[-5000:]
    assert server.client_secret not in run.log
    report = run.value("rest_read")
    assert [(t["identity"], t["snapshot_id"]) for t in report["tables_read"]] == [
        (f"{name}.airflow_e2e.rest_orders", snapshot)
    ]
    assert sorted(map(tuple, report["outputs"][0]["preview"])) == [(i, f"o{i}") for i in range(4)]
    audited = catalog.load_table("substrait_spark.audit_log").scan().to_arrow().to_pylist()
    assert [row["task_id"] for row in audited if row.get("dag_id") == "substrait_test_iceberg_rest"] == ["rest_read"]


@pytest.fixture(scope="module")
def session_order_plans(s3_endpoint, lake, tmp_path_factory) -> Path:
    """`session_order/plain.json` (no tables) and `session_order/lake.json` (reads `lake.airflow_e2e.people`), and
    the catalog configuration naming `lake`."""
    import pyarrow as pa
    from plan_builder import virtual

    people = pa.table({"id": pa.array([1, 2], pa.int64()), "name": pa.array(["Zoë", "Ana"], pa.string())})
    lake.catalog.create_namespace_if_not_exists("airflow_e2e")
    lake.catalog.create_table("airflow_e2e.people", schema=people.schema).append(people)
    _put_plan(s3_endpoint, "session_order/plain.json", PlanBuilder().plan(virtual(["a"], [i32()], [(1,)]), ["a"]))
    read = named(["airflow_e2e", "people"], ["id", "name"], [i64(), string()])
    _put_plan(s3_endpoint, "session_order/lake.json", PlanBuilder().plan(read, ["id", "name"]))
    return lake.write_config(tmp_path_factory.mktemp("session-order") / "catalogs.yaml")


def test_a_task_whose_session_lacks_iceberg_is_refused_with_the_fix(test_dags, session_order_plans):
    """Issue 28 item 5: the first task (no catalogs) starts the worker's session without Iceberg's jars; the second
    task's catalog is refused before its run, saying why and what to do — not Spark's `Cannot find catalog plugin
    class` from the read."""
    run = test_dags.dags_test(
        "substrait_test_session_order", "2024-06-02", AIRFLOW_VAR_CATALOG_CONFIG=str(session_order_plans)
    )
    assert run.state_of("plain") == "success", run.log[-5000:]
    assert run.state_of("lake_read") == "failed", run.log[-5000:]
    assert "catalog 'lake': this Spark session lacks Iceberg's classes" in run.log, run.log[-5000:]
    assert "`jars` or `packages` extra" in run.log


def test_both_tasks_run_when_the_connection_brings_iceberg(test_dags, session_order_plans):
    """The fix the refusal names: the connection's `jars` extra gives every session of the worker Iceberg's
    classes; the second task's catalog then joins the running session (runtime settings)."""
    from iceberg_stack import iceberg_session_conf

    spark = json.loads(test_dags.env()["AIRFLOW_CONN_SUBSTRAIT_SPARK_DEFAULT"])
    spark["extra"]["jars"] = iceberg_session_conf()["spark.jars"]
    run = test_dags.dags_test(
        "substrait_test_session_order",
        "2024-06-03",
        AIRFLOW_VAR_CATALOG_CONFIG=str(session_order_plans),
        AIRFLOW_CONN_SUBSTRAIT_SPARK_DEFAULT=json.dumps(spark),
    )
    assert run.state == "success", run.log[-5000:]
    report = run.value("lake_read")
    assert sorted(map(tuple, report["outputs"][0]["preview"])) == [(1, "Zoë"), (2, "Ana")]


def test_operator_update_keys_are_templated_and_match_rows(test_dags, s3_endpoint, lake, tmp_path):
    """The operator's `update_keys` (rendered from a Variable) is the key an UPDATE write matches rows by."""
    import pyarrow as pa
    from plan_builder import WriteRel, virtual, write

    schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
    lake.catalog.create_namespace_if_not_exists("airflow_e2e")
    table = lake.catalog.create_table("airflow_e2e.accounts", schema=schema)  # no identifier fields
    table.append(pa.Table.from_pylist([{"id": i, "name": f"a{i}"} for i in range(3)], schema=schema))
    columns = (["id", "name"], [i64(), string()])
    after = virtual(*columns, [(1, "one"), (7, "nobody")])
    update = write(["airflow_e2e", "accounts"], after, *columns, op=WriteRel.WRITE_OP_UPDATE)
    plan = PlanBuilder().plan(update, columns[0])
    _put_plan(s3_endpoint, "iceberg/update.json", plan)
    config = lake.write_config(tmp_path / "catalogs.yaml")

    run = test_dags.dags_test(
        "substrait_test_update_key", "2024-06-01", AIRFLOW_VAR_CATALOG_CONFIG=str(config), AIRFLOW_VAR_UPDATE_KEY="id"
    )
    assert run.state == "success", run.log[-5000:]
    step = run.value("update_by_key")["steps"][0]
    assert (step["kind"], step["status"], step["rows"]) == ("update", "committed", 1)
    assert step["details"] == {"update_key": ["id"], "update_key_source": "caller"}
    rows = lake.catalog.load_table("airflow_e2e.accounts").scan().to_arrow().to_pylist()
    assert sorted((r["id"], r["name"]) for r in rows) == [(0, "a0"), (1, "one"), (2, "a2")]


def test_a_task_try_reads_and_parses_its_plan_once_with_openlineage(test_dags, s3_endpoint, tmp_path):
    """OpenLineage's start event (asked for in the task's process, as the provider does with `execute_in_thread`)
    and the run share the try's one read of the plan and its one parse (issue 29): the DAG counts the calls."""
    b = PlanBuilder()
    nations = aggregate(named("nation", ["n_nationkey"], [i64()]), measures=[b.agg("count", out=i64(nullable=False))])
    _put_plan(s3_endpoint, "one_read/nations.json", b.plan(nations, ["n"]))
    events = tmp_path / "events.jsonl"
    run = test_dags.dags_test(
        "substrait_test_one_read",
        "2024-06-01",
        AIRFLOW__OPENLINEAGE__TRANSPORT=json.dumps({"type": "file", "log_file_path": str(events), "append": True}),
        AIRFLOW__OPENLINEAGE__NAMESPACE="substrait_tests",
        AIRFLOW__OPENLINEAGE__EXECUTE_IN_THREAD="True",
    )
    assert run.state == "success", run.log[-5000:]
    assert run.value("count_nations")["outputs"][0]["rows"] == 1
    starts = [json.loads(line) for line in events.read_text().splitlines() if '"START"' in line]
    start = next(e for e in starts if e["job"]["name"] == "substrait_test_one_read.count_nations")
    assert start["job"]["facets"]["substrait_plan"]["sha256"] == run.value("count_nations")["plan_sha256"]
    assert [i["name"] for i in start["inputs"]] == ["nation"]  # the start event's lineage is the plan's
    assert run.value("calls") == {"read": 1, "parse": 1}
